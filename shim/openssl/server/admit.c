/* A resumed server connection does not verify its client again: OpenSSL
 * takes the session's peer and verify result as they are. A server whose
 * ClientHello callback moves the connection to another context (a virtual
 * host) therefore lets a client resume into a host that would refuse it,
 * with a ticket from one that took it (nginx's CVE-2025-23419 is this
 * class). The server mode asks before it accepts one of its tickets.
 *
 * The client's certificate is verified as libssl verifies a client's chain
 * in a full handshake (ssl_verify_cert_chain), by the steps the judge takes
 * for a server's (judge_verify, judge.c): the connection's verify
 * store or else its current context's, the connection as the store
 * context's SSL ex_data (callbacks find their SSL and its context there),
 * the security level as the authentication level, the Suite B flags, the
 * "ssl_client" defaults overridden by the connection's parameters, its
 * verify callback, and its current context's certificate-verify callback
 * in place of X509_verify_cert when there is one. Only the leaf can be
 * shown: a ticket's session keeps no chain, so a client whose certificate
 * needs an intermediate is declined (a full handshake). DANE, which a
 * server seldom applies to clients, is not set (no getter tells whether it
 * is enabled). */
#include "admit.h"
#include "ctx.h"
#include "judge/judge.h"
#include "util.h"

/* The verification itself (judge.c's, as a server's); false on any error. */
static bool verifies(SSL *s, X509 *leaf)
{
    struct ctx_parts parts = ctx_parts(R(SSL_get_SSL_CTX)(s));
    /* a context the shim did not set up: its certificate-verify callback
     * is unknown */
    if (parts.rec == NULL || parts.algs == NULL)
        return false;
    OPENSSL_STACK *chain = R(OPENSSL_sk_new_null)();
    long err;
    bool pass = chain != NULL && R(OPENSSL_sk_push)(chain, leaf) > 0 &&
                judge_verify(s, &parts, leaf, (STACK_OF(X509) *)chain, true, &err, NULL) > 0;
    R(OPENSSL_sk_free)(chain);
    return pass;
}

bool admit_session(SSL *s, SSL_SESSION *sess)
{
    int mode = R(SSL_get_verify_mode)(s);
    /* No certificate asked for in the handshake: none judged. (A TLS 1.3
     * server that asks after the handshake judges then.) */
    if (!(mode & SSL_VERIFY_PEER) ||
        ((mode & SSL_VERIFY_POST_HANDSHAKE) && R(SSL_version)(s) >= TLS1_3_VERSION))
        return true;
    X509 *leaf = R(SSL_SESSION_get0_peer)(sess);
    if (leaf == NULL)
        return !(mode & SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
    /* The application's error queue stays as it was; certificates a CA
     * directory loads now are verification's own, not the application's
     * change to its store. */
    R(ERR_set_mark)();
    handshake_enter();
    bool pass = verifies(s, leaf);
    handshake_leave();
    R(ERR_pop_to_mark)();
    return pass;
}
