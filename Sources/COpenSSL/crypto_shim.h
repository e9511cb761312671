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
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

// BIO_get_mem_data is a macro; Swift cannot import it.
static inline long copenssl_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// ECDSA over P-256 for a public key that is used once: a stored passkey's point. Building an
// EVP_PKEY and an EVP_PKEY_CTX for one verification costs about a fifth of the verification
// itself (provider method fetches, parameter copies, locks); the EC_KEY interface goes
// straight to the curve arithmetic. `EC_POINT_oct2point` refuses points that are not on the
// curve, and `ECDSA_verify` refuses signatures that are not strict DER (it re-encodes and
// compares). Returns 1 for a valid signature, 0 for an invalid one, -1 for an unusable key.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int copenssl_p256_verify_point(
    const EC_GROUP *group, const unsigned char *point, size_t point_length,
    const unsigned char *digest, size_t digest_length, const unsigned char *signature, size_t signature_length) {
    if (signature_length > 0x7fffffff || digest_length > 0x7fffffff) return -1;
    int result = -1;
    EC_KEY *key = EC_KEY_new();
    EC_POINT *decoded = EC_POINT_new(group);
    if (key != NULL && decoded != NULL
        && EC_KEY_set_group(key, group) == 1
        && EC_POINT_oct2point(group, decoded, point, point_length, NULL) == 1
        && EC_KEY_set_public_key(key, decoded) == 1) {
        result = ECDSA_verify(0, digest, (int)digest_length, signature, (int)signature_length, key);
    }
    EC_POINT_free(decoded);
    EC_KEY_free(key);
    return result;
}
#pragma GCC diagnostic pop

// EVP_PKEY selection macros are compound expressions Swift does not import.
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int copenssl_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
#endif
