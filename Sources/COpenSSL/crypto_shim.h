#ifndef COPENSSL_CRYPTO_SHIM_H
#define COPENSSL_CRYPTO_SHIM_H
// Headers and static inline wrappers used by the Crypto module.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

// BIO_get_mem_data is a macro; Swift cannot import it.
static inline long copenssl_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// EVP_PKEY selection macros are compound expressions Swift does not import.
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int copenssl_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
#endif
