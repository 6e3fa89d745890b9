/* OCSP stapling on resumed connections: the staple is an input the
 * application's judge saw, and is kept exact with the session.
 *
 * A client that asks for a stapled OCSP response (SSL_set_tlsext_status_type)
 * may judge it in a status callback. OpenSSL 3.0's client (and 3.5.7's,
 * ssl/statem/statem_clnt.c) calls that
 * callback in every TLS 1.3 handshake, resumed or not (tls_process_finished
 * calls tls_process_initial_server_flight, which calls it), and a resumed
 * one finds no staple there: a server sends none without a Certificate
 * message. It never calls it in a TLS 1.2 abbreviated handshake. Verified
 * on this machine with `openssl s_client -status -sess_out F` then
 * `-sess_in F` against `openssl s_server -status_file R`: the resumed
 * TLS 1.3 run printed "OCSP response: no response sent" (the callback ran,
 * with nothing), the resumed TLS 1.2 run printed no OCSP line (it did not).
 *
 * So the staple the full handshake received (or its absence) travels with
 * each session (struct chain), and on a connection resumed from a session
 * the shim offered, the application's callback is shown that same staple
 * on the connection (SSL_set_tlsext_status_ocsp_resp) before it runs: in
 * TLS 1.3 by the shim's callback, which stands in for the application's
 * and calls it; in TLS 1.2, where OpenSSL calls nothing, by the shim once
 * the resumed handshake completes (conndone.c). Programs that check after the
 * handshake that a staple came (IO::Socket::SSL's SSL_OCSP_MUST_STAPLE)
 * find it there as well. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "ocsp.h"

static void (*judging)(SSL *s);
static void (*judged)(SSL *s, int verdict);

/* The application's callback is kept with its context's state (ctx.c). */
void ocsp_init(void (*before)(SSL *s), void (*after)(SSL *s, int verdict))
{
    judging = before;
    judged = after;
}

/* OpenSSL calls it as it would the application's, with the context's
 * argument. Server connections (a context may do both) and connections
 * the shim offered nothing to pass straight through. */
static int status_cb(SSL *s, void *arg)
{
    shim_status_cb app = ctx_status_cb(R(SSL_get_SSL_CTX)(s));
    if (app == NULL)
        return 1; /* unreachable: the shim's stands only in for one */
    bool client = !R(SSL_is_server)(s);
    if (client)
        judging(s);
    int verdict = app(s, arg);
    if (client)
        judged(s, verdict);
    return verdict;
}

static void *as_ptr(shim_status_cb cb)
{
    void *p;
    memcpy(&p, &cb, sizeof p);
    return p;
}

bool ocsp_set_cb(SSL_CTX *ctx, void (*fp)(void), long *ret)
{
    shim_status_cb app;
    memcpy(&app, &fp, sizeof fp);
    if (!ctx_set_status_cb(ctx, app))
        return false;
    void (*mine)(void) = NULL;
    if (fp != NULL) {
        shim_status_cb cb = status_cb;
        memcpy(&mine, &cb, sizeof mine);
    }
    *ret = R(SSL_CTX_callback_ctrl)(ctx, SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB, mine);
    return true;
}

void ocsp_hide_cb(SSL_CTX *ctx, void *parg)
{
    void *have;
    if (parg == NULL)
        return;
    memcpy(&have, parg, sizeof have);
    if (have == as_ptr(status_cb)) {
        shim_status_cb app = ctx_status_cb(ctx);
        memcpy(parg, &app, sizeof app);
    }
}

enum ocsp_judge ocsp_judge_of(SSL *s)
{
    if (R(SSL_ctrl)(s, SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE, 0, NULL) == -1)
        return OCSP_NONE;
    void *cb = NULL;
    R(SSL_CTX_ctrl)(R(SSL_get_SSL_CTX)(s), SSL_CTRL_GET_TLSEXT_STATUS_REQ_CB, 0, &cb);
    if (cb == NULL)
        return OCSP_STAPLE;
    return cb == as_ptr(status_cb) ? OCSP_JUDGED : OCSP_UNKNOWN;
}

int ocsp_ask(SSL *s)
{
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    shim_status_cb app = ctx_status_cb(ctx);
    void *arg = NULL;
    if (app == NULL)
        return 1;
    R(SSL_CTX_ctrl)(ctx, SSL_CTRL_GET_TLSEXT_STATUS_REQ_CB_ARG, 0, &arg);
    return app(s, arg);
}

bool ocsp_present(SSL *s, const struct chain *c)
{
    if (c->staple == NULL)
        return true; /* the full handshake got none: neither does this one */
    unsigned char *copy = R(CRYPTO_malloc)(c->staple_len, __FILE__, __LINE__);
    if (copy == NULL)
        return false;
    memcpy(copy, c->staple, c->staple_len);
    /* The connection owns it from now on, as it owns one a server sent. */
    if (R(SSL_ctrl)(s, SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP, (long)c->staple_len, copy) != 1) {
        R(CRYPTO_free)(copy, __FILE__, __LINE__);
        return false;
    }
    return true;
}

static time_t to_time(const ASN1_GENERALIZEDTIME *t)
{
    struct tm tm;
    if (R(ASN1_TIME_to_tm)(t, &tm) != 1)
        return 0;
    return timegm(&tm);
}

time_t ocsp_valid_until(const unsigned char *der, size_t len)
{
    const unsigned char *p = der;
    time_t until = 0;
    if (der == NULL)
        return (time_t)LONG_MAX;
    if (len > LONG_MAX)
        return 0;
    R(ERR_set_mark)();
    OCSP_RESPONSE *resp = R(d2i_OCSP_RESPONSE)(NULL, &p, (long)len);
    OCSP_BASICRESP *basic = resp != NULL ? R(OCSP_response_get1_basic)(resp) : NULL;
    int n = basic != NULL ? R(OCSP_resp_count)(basic) : 0;
    if (n > 0)
        until = (time_t)LONG_MAX;
    for (int i = 0; i < n && until != 0; i++) {
        ASN1_GENERALIZEDTIME *next = NULL;
        OCSP_SINGLERESP *one = R(OCSP_resp_get0)(basic, i);
        if (one == NULL || R(OCSP_single_get0_status)(one, NULL, NULL, NULL, &next) < 0)
            until = 0;
        else if (next != NULL) {
            time_t t = to_time(next);
            until = t < until ? t : until;
        }
    }
    R(OCSP_BASICRESP_free)(basic);
    R(OCSP_RESPONSE_free)(resp);
    R(ERR_pop_to_mark)();
    return until;
}
