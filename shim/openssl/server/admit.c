/* A resumed server connection does not verify its client again: OpenSSL
 * takes the session's peer and verify result as they are. A server whose
 * ClientHello callback moves the connection to another context (a virtual
 * host) therefore lets a client resume into a host that would refuse it,
 * with a ticket from one that took it (nginx's CVE-2025-23419 is this
 * class). The server mode asks before it accepts one of its tickets.
 *
 * The client's certificate is verified as libssl verifies a client's chain
 * in a full handshake (ssl_verify_cert_chain): the connection's verify
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
#include "util.h"

/* The verification itself; false on any error. */
static bool verifies(SSL *s, X509 *leaf)
{
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    const struct recorded *rec = ctx_recorded(ctx);
    const struct algs *algs = ctx_algs(ctx);
    /* a context the shim did not set up: its certificate-verify callback
     * is unknown */
    if (rec == NULL || algs == NULL)
        return false;
    X509_STORE *store = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &store);
    if (store == NULL)
        store = R(SSL_CTX_get_cert_store)(ctx);
    X509_STORE_CTX *xs = R(X509_STORE_CTX_new_ex)(algs->libctx, algs->propq);
    OPENSSL_STACK *chain = R(OPENSSL_sk_new_null)();
    int idx = R(SSL_get_ex_data_X509_STORE_CTX_idx)();
    X509_VERIFY_PARAM *param = NULL;
    bool pass = false;
    if (xs != NULL && chain != NULL && idx >= 0 && R(OPENSSL_sk_push)(chain, leaf) > 0 &&
        R(X509_STORE_CTX_init)(xs, store, leaf, (STACK_OF(X509) *)chain) == 1)
        param = R(X509_STORE_CTX_get0_param)(xs);
    if (param != NULL) {
        R(X509_VERIFY_PARAM_set_auth_level)(param, R(SSL_get_security_level)(s));
        /* SSL_CTRL_CERT_FLAGS with 0 reads the flags (it ORs them in):
         * 0x30000 after SSL_set_cipher_list(s, "SUITEB128"), measured. */
        long flags = R(SSL_ctrl)(s, SSL_CTRL_CERT_FLAGS, 0, NULL) & SSL_CERT_FLAG_SUITEB_128_LOS;
        R(X509_STORE_CTX_set_flags)(xs, (unsigned long)flags);
        if (R(X509_STORE_CTX_set_ex_data)(xs, idx, s) != 1 ||
            R(X509_STORE_CTX_set_default)(xs, "ssl_client") != 1 ||
            R(X509_VERIFY_PARAM_set1)(param, R(SSL_get0_param)(s)) != 1)
            param = NULL;
    }
    if (param != NULL) {
        SSL_verify_cb cb = R(SSL_get_verify_callback)(s);
        if (cb != NULL)
            R(X509_STORE_CTX_set_verify_cb)(xs, cb);
        int ok = rec->cert_verify_cb != NULL ? rec->cert_verify_cb(xs, rec->cert_verify_arg)
                                             : R(X509_verify_cert)(xs);
        pass = ok > 0;
    }
    R(OPENSSL_sk_free)(chain);
    R(X509_STORE_CTX_free)(xs);
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
