#ifndef COPENSSL_X509_SHIM_H
#define COPENSSL_X509_SHIM_H
// Headers and static inline wrappers used by the Crypto module's X.509 support.
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <time.h>

// sk_X509_* are macros over OPENSSL_sk_*; Swift cannot import them.
static inline STACK_OF(X509) *copenssl_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int copenssl_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}
static inline void copenssl_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

// Converts a certificate time to seconds since the epoch (UTC); 0 on failure.
static inline int copenssl_asn1_time_to_epoch(const ASN1_TIME *time, long long *out) {
    struct tm parts;
    if (ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    *out = (long long)timegm(&parts);
    return 1;
}

static inline const unsigned char *copenssl_asn1_string_data(const ASN1_STRING *string) {
    return ASN1_STRING_get0_data(string);
}
// EVP_PKEY_KEY_PARAMETERS is a compound macro Swift does not import.
static inline int copenssl_selection_key_parameters(void) { return EVP_PKEY_KEY_PARAMETERS; }
#endif
