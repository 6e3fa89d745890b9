/* Asking the application's own judge again, before every offer.
 *
 * A verify callback or a certificate-verify callback can decide by
 * anything: a pinned key, a host name checked in the callback itself (Ruby
 * does), a procedure of the program's language behind one C trampoline
 * (Ruby, Perl, PHP). No cache key can tell two such judges apart, and a
 * resumed handshake would not consult them: OpenSSL reuses the verdict
 * stored in the session.
 *
 * So a connection with such a callback is offered a session only after
 * the session's server certificate has been verified again, now, for this
 * connection, set up the way libssl sets up its own verification of a
 * server's chain (ssl_verify_cert_chain): the connection's verify store or
 * else its context's, the connection as the store context's SSL ex_data
 * (callbacks find their SSL there), the "ssl_server" defaults overridden
 * by the connection's verify parameters, its security level as the
 * authentication level, its verify callback, and the context's
 * certificate-verify callback in place of X509_verify_cert when there is
 * one. The callbacks then see what they would see in a full handshake
 * with the same server, and the session is offered only if that passes
 * without any error. The connection's own verify result is not touched:
 * a resumed handshake sets it from the session, as always.
 *
 * What libssl adds and this does not: Suite B flags (no getter) and DANE
 * (not in the key either; see libresumeshim(7), LIMITS). */
#include "ctx.h"
#include "reverify.h"
#include "util.h"

bool reverify_needed(SSL *s, const struct recorded *ctx_rec)
{
    return R(SSL_get_verify_callback)(s) != NULL ||
           (ctx_rec != NULL && ctx_rec->cert_verify_cb != NULL);
}

bool reverify_session(SSL *s, const struct recorded *ctx_rec, SSL_SESSION *sess,
                      STACK_OF(X509) *chain)
{
    X509 *leaf = R(SSL_SESSION_get0_peer)(sess);
    if (leaf == NULL)
        return false; /* nothing to show the judge: no offer */
    X509_STORE *store = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &store);
    if (store == NULL)
        store = R(SSL_CTX_get_cert_store)(R(SSL_get_SSL_CTX)(s));
    /* Verified in the library context the connection would verify in. */
    const struct algs *algs = ctx_algs(R(SSL_get_SSL_CTX)(s));
    X509_STORE_CTX *xs = algs != NULL ? R(X509_STORE_CTX_new_ex)(algs->libctx, algs->propq) : NULL;
    if (xs == NULL)
        return false;
    /* Errors of a failed verification belong to no call of the
     * application's: leave its error queue as it was. */
    R(ERR_set_mark)();
    /* Certificates a CA directory loads now are verification's own, not
     * a change the application made to its trust store. */
    handshake_enter();
    bool pass = false;
    int idx = R(SSL_get_ex_data_X509_STORE_CTX_idx)();
    X509_VERIFY_PARAM *param = NULL;
    if (idx >= 0 && R(X509_STORE_CTX_init)(xs, store, leaf, chain) == 1)
        param = R(X509_STORE_CTX_get0_param)(xs);
    /* In libssl's order: the security level first, then the defaults of
     * the purpose fill what is unset, then the connection's own
     * parameters override. */
    if (param != NULL) {
        R(X509_VERIFY_PARAM_set_auth_level)(param, R(SSL_get_security_level)(s));
        if (R(X509_STORE_CTX_set_ex_data)(xs, idx, s) != 1 ||
            R(X509_STORE_CTX_set_default)(xs, "ssl_server") != 1 ||
            R(X509_VERIFY_PARAM_set1)(param, R(SSL_get0_param)(s)) != 1)
            param = NULL;
    }
    if (param != NULL) {
        SSL_verify_cb cb = R(SSL_get_verify_callback)(s);
        if (cb != NULL)
            R(X509_STORE_CTX_set_verify_cb)(xs, cb);
        int ok = ctx_rec != NULL && ctx_rec->cert_verify_cb != NULL
                     ? ctx_rec->cert_verify_cb(xs, ctx_rec->cert_verify_arg)
                     : R(X509_verify_cert)(xs);
        pass = ok > 0 && R(X509_STORE_CTX_get_error)(xs) == X509_V_OK;
    }
    handshake_leave();
    R(X509_STORE_CTX_free)(xs);
    R(ERR_pop_to_mark)();
    return pass;
}
