/* Certificate callbacks seen to run (certcb.h).
 *
 * Verified on Debian 12 (OpenSSL 3.0.19, a client with SSL_CTX_set_cert_cb
 * against openssl s_server, TLS 1.3 and 1.2): no call without -verify, one
 * in a full handshake with -verify or -Verify, none in a resumed one; 3.5.7
 * calls it from the same place only (tls_prepare_client_certificate after
 * a CertificateRequest, ssl/statem/statem_clnt.c), and the suite's
 * certificate-callback tests pass on Debian 13's 3.5.9.
 *
 * Only a connection's own callback (SSL_set_cert_cb) is watched. A
 * context's is copied into each connection made after it is set, and not
 * into those made before, which no hook sees (SSL_new): a context with one
 * resumes nothing (hooks.c). OpenSSL has no getter for either callback, so
 * the trampoline is never seen by the program. The connection's callback
 * stays in its recorded settings, which SSL_dup copies, as it copies the
 * connection's certificate settings; SSL_set_SSL_CTX replaces those
 * settings with the new context's, callback and all (hooks.c notes it). */
#include "certcb.h"
#include "client/conn.h"
#include "settings.h"

int certcb_trampoline(SSL *s, void *arg)
{
    const struct recorded *r = settings_peek(s);
    conn_cert_asked(s);
    return r != NULL && r->cert_fn != NULL ? r->cert_fn(s, arg) : 1;
}
