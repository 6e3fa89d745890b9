/* The judge: the server behind a session, verified again (judge.h).
 *
 * A resumed handshake does not verify the server: OpenSSL copies the
 * verdict stored in the session. The key chooses which session is offered,
 * but it sees the configuration as the handshake starts, and programs set
 * trust later (Debian's curl 7.88 loads its CA file after its first
 * SSL_connect has sent the ClientHello), keep it where no getter reaches
 * (callbacks), or depend on time (an intermediate that expired since). So
 * the chain behind a session is verified again, as libssl verifies a
 * server's chain in a full handshake, under the connection's configuration
 * as it is then. The steps are those of ssl_verify_cert_chain
 * (ssl/ssl_cert.c, OpenSSL 3.0.19 as Debian 12 ships it; the same steps
 * for a chain in 3.5.7's ssl_verify_internal, whose new branch for raw
 * public keys the shim never reaches: later.c), in its order:
 *   the connection's verify store, else its context's; a store context in
 *   the context's library context and property query; the leaf and the
 *   chain as the server sent it; the connection's security level as the
 *   authentication level; the Suite B flags of its certificate settings;
 *   the connection as the store context's SSL ex_data (callbacks find
 *   their SSL there); its DANE state; the "ssl_server" defaults overridden
 *   by the connection's parameters; its verify callback; the context's
 *   certificate-verify callback in place of X509_verify_cert; then the
 *   verify result and the matched peer name moved to the connection.
 * The DANE state is given whether or not DANE is on: X509_verify_cert and
 * every function it calls read it only behind DANETLS_ENABLED or
 * DANETLS_HAS_TA (crypto/x509/x509_vfy.c, 3.0.19 and 3.5.7), which is libssl's own
 * condition for giving it. */
#include "ctx.h"
#include "judge.h"
#include "keyfacts.h"
#include "trust/trust.h"
#include "client/session.h"
#include "util.h"

static enum verdict judge_chain(SSL *s, const struct ctx_parts *parts, STACK_OF(X509) *chain,
                                STACK_OF(X509) **verified);

/* The connection this thread is judging, and whether its verify callback
 * asked to suspend the judgment. */
static _Thread_local const SSL *judging;
static _Thread_local bool retry_asked;

void judge_retry_asked(const SSL *s)
{
    if (s != NULL && s == judging)
        retry_asked = true;
}

/* judge_verify (judge.h), made inline in both its callers: the judge's
 * own, with server false, then holds the client's steps alone, at the
 * cost they had before the server mode's admission shared them. */
static inline __attribute__((always_inline)) int
verify(SSL *s, const struct ctx_parts *parts, X509 *leaf, STACK_OF(X509) *chain, bool server,
       long *err, STACK_OF(X509) **verified)
{
    *err = X509_V_ERR_UNSPECIFIED;
    X509_STORE *store = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &store);
    if (store == NULL)
        store = R(SSL_CTX_get_cert_store)(R(SSL_get_SSL_CTX)(s));
    const struct recorded *ctx_rec = parts->rec;
    const struct algs *algs = parts->algs;
    X509_STORE_CTX *xs = algs != NULL ? R(X509_STORE_CTX_new_ex)(algs->libctx, algs->propq) : NULL;
    if (xs == NULL)
        return 0;
    /* Certificates a CA directory loads now are verification's own, not
     * a change the application made to its trust store. */
    handshake_enter();
    int ok = 0;
    int idx = R(SSL_get_ex_data_X509_STORE_CTX_idx)();
    X509_VERIFY_PARAM *param = NULL;
    if (idx >= 0 && R(X509_STORE_CTX_init)(xs, store, leaf, chain) == 1)
        param = R(X509_STORE_CTX_get0_param)(xs);
    if (param != NULL) {
        R(X509_VERIFY_PARAM_set_auth_level)(param, R(SSL_get_security_level)(s));
        /* SSL_CTRL_CERT_FLAGS ORs its argument in and answers the flags:
         * with 0, a getter (ssl/s3_lib.c; 0x30000 after
         * SSL_set_cipher_list(s, "SUITEB128"), measured). */
        R(X509_STORE_CTX_set_flags)(xs, (unsigned long)R(SSL_ctrl)(s, SSL_CTRL_CERT_FLAGS, 0, NULL) &
                                            SSL_CERT_FLAG_SUITEB_128_LOS);
        if (R(X509_STORE_CTX_set_ex_data)(xs, idx, s) != 1)
            param = NULL;
    }
    if (param != NULL) {
        if (!server)
            R(X509_STORE_CTX_set0_dane)(xs, R(SSL_get0_dane)(s));
        /* libssl goes on should these fail; a server's admission does not
         * (admit.c). */
        bool set = R(X509_STORE_CTX_set_default)(xs, server ? "ssl_client" : "ssl_server") == 1;
        set = R(X509_VERIFY_PARAM_set1)(param, R(SSL_get0_param)(s)) == 1 && set;
        if (server && !set)
            param = NULL;
    }
    if (param != NULL) {
        SSL_verify_cb cb = R(SSL_get_verify_callback)(s);
        if (cb != NULL)
            R(X509_STORE_CTX_set_verify_cb)(xs, cb);
        judging = s, retry_asked = false;
        if (ctx_rec != NULL && ctx_rec->cert_verify_cb != NULL) {
            ok = ctx_rec->cert_verify_cb(xs, ctx_rec->cert_verify_arg);
        } else {
            /* Where no code of the program's own runs (no verify callback,
             * store function, lookup method, purpose or trust check of its
             * own), only certificates' keys are asked about (keyfacts.c). */
            bool facts = cb == NULL && !trust_program_code_seen() && !trust_runs_code(store);
            if (facts)
                keyfacts_begin();
            ok = R(X509_verify_cert)(xs);
            if (facts)
                keyfacts_end();
            if (ok < 0)
                ok = 0;
        }
        judging = NULL;
        *err = R(X509_STORE_CTX_get_error)(xs);
        if (!server) {
            if (R(X509_STORE_CTX_get0_chain)(xs) != NULL)
                *verified = R(X509_STORE_CTX_get1_chain)(xs);
            R(X509_VERIFY_PARAM_move_peername)(R(SSL_get0_param)(s), param);
        }
    }
    handshake_leave();
    R(X509_STORE_CTX_free)(xs);
    return ok;
}

int judge_verify(SSL *s, const struct ctx_parts *parts, X509 *leaf, STACK_OF(X509) *chain,
                 bool server, long *err, STACK_OF(X509) **verified)
{
    return verify(s, parts, leaf, chain, server, err, verified);
}

enum verdict judge_resumed(SSL *s, const struct ctx_parts *parts, STACK_OF(X509) *chain,
                           STACK_OF(X509) **verified)
{
    const struct algs *algs = parts->algs;
    /* X509_verify checks a certificate in the library context it was made
     * in (x_all.c), and a chain from the store was decoded in the default
     * one: a connection in a library context of its own judges a copy made
     * in it. */
    STACK_OF(X509) *own = NULL;
    if (algs != NULL && (algs->libctx != NULL || algs->propq != NULL) &&
        (own = chain_remade(chain, algs->libctx, algs->propq)) == NULL) {
        R(SSL_set_verify_result)(s, X509_V_ERR_OUT_OF_MEM);
        return R(SSL_get_verify_mode)(s) != SSL_VERIFY_NONE ? VERDICT_REFUSED : VERDICT_PASSED;
    }
    enum verdict v = judge_chain(s, parts, own != NULL ? own : chain, verified);
    if (own != NULL)
        R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)own, (OPENSSL_sk_freefunc)R(X509_free));
    return v;
}

static enum verdict judge_chain(SSL *s, const struct ctx_parts *parts, STACK_OF(X509) *chain,
                                STACK_OF(X509) **verified)
{
    OPENSSL_STACK *sk = (OPENSSL_STACK *)chain;
    X509 *leaf = sk != NULL && R(OPENSSL_sk_num)(sk) > 0 ? R(OPENSSL_sk_value)(sk, 0) : NULL;
    if (leaf == NULL) {
        /* ssl_verify_cert_chain fails an empty chain. */
        R(SSL_set_verify_result)(s, X509_V_ERR_UNSPECIFIED);
        return R(SSL_get_verify_mode)(s) != SSL_VERIFY_NONE ? VERDICT_REFUSED : VERDICT_PASSED;
    }
    /* A resumed handshake leaves the error queue as it was; so does a
     * verification that passes (libssl clears the queue after one, inside
     * a handshake the application started with nothing on it). */
    R(ERR_set_mark)();
    long err;
    int ok = verify(s, parts, leaf, chain, false, &err, verified);
    /* tls_post_process_server_certificate: a callback that asked to
     * suspend the handshake, and did not refuse, is asked again later. */
    if (ok > 0 && retry_asked) {
        R(ERR_pop_to_mark)();
        return VERDICT_PENDING;
    }
    R(SSL_set_verify_result)(s, err);
    /* tls_post_process_server_certificate (ssl/statem/statem_clnt.c):
     * any verify mode bit makes a failure fatal, not only SSL_VERIFY_PEER;
     * without one, the result is only recorded. */
    if (ok <= 0 && R(SSL_get_verify_mode)(s) != SSL_VERIFY_NONE) {
        R(ERR_clear_last_mark)();
        return VERDICT_REFUSED;
    }
    R(ERR_pop_to_mark)();
    /* Certificate Transparency turned on after the offer (the key refuses
     * it before): the SCTs a full handshake would judge are not there to
     * judge, and libssl fails a connection whose SCTs fail when it verifies
     * the peer (tls_process_initial_server_flight). */
    if (R(SSL_ct_is_enabled)(s) && (R(SSL_get_verify_mode)(s) & SSL_VERIFY_PEER))
        return VERDICT_UNJUDGED;
    return VERDICT_PASSED;
}
