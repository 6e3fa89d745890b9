/* session: OpenSSL's sessions as the core sees them (the table of
 * operations, include/seam.h), and what the shim reads off one to decide
 * whether it may be offered. */
#ifndef RESUMESHIM_OSSL_SESSION_H
#define RESUMESHIM_OSSL_SESSION_H

#include <stdbool.h>
#include <time.h>

#include "real.h"
#include "seam.h"

extern const struct tls_ops ossl_ops;

bool session_is_tls13(const SSL_SESSION *sess);
bool session_same_ticket(const SSL_SESSION *a, const SSL_SESSION *b);
/* The last moment the session may be offered, from its own contents and
 * the configured maximum age. */
time_t session_expiry(const SSL_SESSION *sess, time_t born, long max_age, X509 *own_cert);
/* The earliest notAfter of a chain; 0 (always past) for none, or for one
 * that cannot be dated. */
time_t chain_expiry(STACK_OF(X509) *chain);
/* A chain's certificates as OpenSSL objects, decoded from its DER on first
 * use (NULL when there are none). */
STACK_OF(X509) *chain_certs(struct chain *c);
/* A copy of certs made in a library context (X509_verify checks a
 * certificate in its own); NULL on failure. */
STACK_OF(X509) *chain_remade(STACK_OF(X509) *certs, OSSL_LIB_CTX *libctx, const char *propq);
/* A chain holding a reference to the connection's verified certificates. */
void chain_set_certs(struct chain *c, STACK_OF(X509) *certs);

#endif
