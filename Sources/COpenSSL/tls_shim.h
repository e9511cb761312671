#ifndef COPENSSL_TLS_SHIM_H
#define COPENSSL_TLS_SHIM_H
// Headers and static inline wrappers used by the HTTPServer module: OpenSSL for TLS, and
// the Linux socket APIs that Swift's Glibc module does not import (epoll, eventfd, accept4).
// They live here because HTTPServer depends on no other C target.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// accept4 is declared by <sys/socket.h> only under _GNU_SOURCE.
extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

// SSL_CTX_set_min_proto_version and SSL_CTX_set_mode are macros Swift cannot import.
static inline int tls_shim_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline void tls_shim_ctx_set_server_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                              | SSL_MODE_RELEASE_BUFFERS);
}

static inline void tls_shim_ctx_set_server_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE
                                 | SSL_OP_NO_COMPRESSION);
}

// SSL_set_tlsext_host_name is a macro: the SNI name a client sends.
static inline int tls_shim_set_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
#endif
