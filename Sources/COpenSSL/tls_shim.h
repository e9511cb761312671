#ifndef COPENSSL_TLS_SHIM_H
#define COPENSSL_TLS_SHIM_H
// Headers and static inline wrappers used by the HTTPServer module for TLS.
#include <openssl/ssl.h>
#include <openssl/err.h>
#endif
