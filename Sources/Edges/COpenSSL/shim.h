#ifndef FAILCLOSED_COPENSSL_SHIM_H
#define FAILCLOSED_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

/* OpenSSL exposes these as macros; Swift cannot call macros, so each gets an inline shim. */
static inline long fc_SSL_set_tlsext_host_name(SSL *s, const char *name) {
  return SSL_set_tlsext_host_name(s, name);
}
static inline long fc_SSL_CTX_set_min_proto_version(SSL_CTX *c, int v) {
  return SSL_CTX_set_min_proto_version(c, v);
}
static inline long fc_SSL_CTX_set_mode(SSL_CTX *c, long m) { return SSL_CTX_set_mode(c, m); }
static inline long fc_SSL_CTX_set_options(SSL_CTX *c, long o) { return SSL_CTX_set_options(c, o); }
static inline long fc_BIO_get_mem_data(BIO *b, char **p) { return BIO_get_mem_data(b, p); }
static inline EVP_PKEY *fc_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline int fc_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
static inline long fc_SSL_MODE_AUTO_RETRY(void) { return SSL_MODE_AUTO_RETRY; }
static inline long fc_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *c, int (*cb)(SSL *, int *, void *)) {
  return SSL_CTX_set_tlsext_servername_callback(c, cb);
}
static inline long fc_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *c, void *arg) {
  return SSL_CTX_set_tlsext_servername_arg(c, arg);
}
static inline int fc_SSL_TLSEXT_ERR_OK(void) { return SSL_TLSEXT_ERR_OK; }
static inline int fc_SSL_TLSEXT_ERR_ALERT_FATAL(void) { return SSL_TLSEXT_ERR_ALERT_FATAL; }
static inline long fc_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER(void) {
  return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
}
static inline long fc_SSL_OP_IGNORE_UNEXPECTED_EOF(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
static inline long fc_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline void fc_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline int fc_X509_V_OK(void) { return X509_V_OK; }
static inline int fc_X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS(void) {
  return X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS;
}
/* A zeroed v3 context without a config database (X509V3_set_ctx_nodb is a macro). */
static inline void fc_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }
static inline int fc_MBSTRING_ASC(void) { return MBSTRING_ASC; }
#endif
