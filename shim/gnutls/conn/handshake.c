/* A GnuTLS client handshake, followed: the session offered before it,
 * what it earned and proved after it, its judgment when it resumed the
 * shim's session, and the tickets that arrive once it is done (gconn.h). */
#include <pthread.h>
#include <time.h>

#include "flush.h"
#include "gconn.h"
#include "judge/judge.h"
#include "log.h"
#include "observer.h"
#include "pool.h"
#include "session.h"
#include "store.h"

static int judge(struct gconn *c);

static void offer(struct gconn *c)
{
    struct pooled p;
    pool_take(&c->key, time(NULL), &p);
    if (p.sess == NULL)
        return;
    size_t len;
    const unsigned char *data = gsession_data(p.sess, &len);
    /* Data GnuTLS will not take now it will not take later. */
    if (G(gnutls_session_set_data)(c->s, data, len) != 0) {
        pooled_free(&p);
        return;
    }
    c->offered = p;
    stat_add(ST_OFFERED);
    LOG(LOG_DEBUG, "offered a TLS %s session (GnuTLS)", p.ops->is_tls13(p.sess) ? "1.3" : "1.2");
}

static bool sees_server_auth(unsigned htype)
{
    /* 25: TLS 1.3's compressed certificate (RFC 8879), named from 3.7.4 on */
    return htype == GNUTLS_HANDSHAKE_ANY || htype == GNUTLS_HANDSHAKE_CERTIFICATE_PKT ||
           htype == 25 ||
           htype == GNUTLS_HANDSHAKE_CERTIFICATE_VERIFY ||
           htype == GNUTLS_HANDSHAKE_CERTIFICATE_STATUS ||
           htype == GNUTLS_HANDSHAKE_SERVER_KEY_EXCHANGE;
}

bool gconn_begin(gnutls_session_t s, int *held)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return false;
    /* A handshake the judgment refused stays refused, as a failed full
     * handshake does; one whose verify function asked to be called again
     * is judged again, GnuTLS's handshake being over. */
    if (c->ended && !c->done) {
        *held = c->failed != 0 ? c->failed : judge(c);
        return true;
    }
    if (c->started)
        return false;
    c->started = true;
    c->gen = pool_generation();
    stat_add(ST_HANDSHAKES);
    gverdict_key(s, &c->set, store_on(), &c->key, &c->id);
    /* A hook of the program's on a message that carries the server's
     * authentication is a check a resumed handshake never runs (it sends
     * no such message), and no judgment can run it again; unless it is
     * known to decide nothing (observer.c). */
    if (c->app_hook != NULL && sees_server_auth(c->app_htype) &&
        !observer(c->app_hook, c->app_when)) {
        LOG(LOG_DEBUG, "no resumption: a handshake hook on the server's authentication");
        key_fail(&c->key);
    }
    /* A session the program set itself (libcurl's cache) is its own. */
    if (!c->app_data && c->key.len != 0)
        offer(c);
    return false;
}

/* TLS 1.2 session data is whole once the handshake is: taken now. (A TLS
 * 1.3 session waits for its tickets, which come later: gconn_on_message.) */
static void take_data(struct gconn *c)
{
    gnutls_datum_t d = {NULL, 0};
    if (G(gnutls_session_get_data2)(c->s, &d) == 0 && d.data != NULL && d.size > 4 &&
        d.size <= MAX_TICKET_BYTES * 4)
        gconn_hold(c, d.data, d.size, false);
    greal_free(d.data);
}

/* The handshake passed, or its judgment did: the connection is the
 * program's, and what it earns is held until data moves. */
static void passed(struct gconn *c)
{
    c->done = true;
    if (c->key.len == 0 || c->refused)
        return;
    pthread_mutex_lock(&gconn_lock);
    gconn_watch(c);
    pthread_mutex_unlock(&gconn_lock);
    if (G(gnutls_protocol_get_version)(c->s) != GNUTLS_TLS1_3)
        take_data(c);
}

/* A failed judgment fails the handshake as the full one would have: the
 * error is the program's, no data moves (the record functions refuse as
 * they do before a handshake ends), and what this server's sessions carry
 * no longer passes: none is offered again, in memory or in the store. */
static int refuse(struct gconn *c, int err)
{
    c->failed = err;
    pthread_mutex_lock(&gconn_lock);
    gconn_watch(c);
    pthread_mutex_unlock(&gconn_lock);
    if (c->key.len != 0)
        pool_refuse(&c->key);
    LOG(LOG_DEBUG, "a resumed GnuTLS connection failed its judgment: %d", err);
    return err;
}

static int judge(struct gconn *c)
{
    int v = gjudge(c->s, &c->set);
    /* Asked to be called again: no data moves meanwhile (gconn_io_before),
     * as GnuTLS moves none inside a handshake. */
    if (v == GNUTLS_E_AGAIN || v == GNUTLS_E_INTERRUPTED) {
        gconn_watch(c);
        return v;
    }
    if (v < 0)
        return refuse(c, v);
    passed(c);
    return 0;
}

/* A full handshake in which a function, or credentials the shim cannot
 * read, chose who the client is: the key does not hold that identity, so
 * nothing the handshake earned is kept. (One in which the function was
 * not asked, a server asking for no certificate, presented none.) */
static bool chosen_blind(const struct gconn *c)
{
    gnutls_credentials_type_t auth = G(gnutls_auth_client_get_type)(c->s);
    return (c->id.cert_fn && G(gnutls_certificate_client_get_request_status)(c->s) != 0) ||
           (c->id.psk_fn && auth == GNUTLS_CRD_PSK) || (c->id.srp && auth == GNUTLS_CRD_SRP);
}

int gconn_after(gnutls_session_t s, int ret)
{
    struct gconn *c = ret == 0 ? gconn_get(s) : NULL;
    if (c == NULL || !c->started || c->ended)
        return ret;
    c->ended = true;
    gflush_handshake(s, c->set.own_transport);
    bool resumed = G(gnutls_session_is_resumed)(s) == 1;
    stat_add(resumed ? ST_RESUMED : ST_FULL);
    if (c->offered.sess != NULL)
        pool_verdict(&c->key, resumed);
    /* A resumed connection proves nothing new about the server: what it
     * earns inherits the moment of the full handshake that verified it.
     * One resumed from the program's own data was not judged under this
     * key, nor is its age known: it publishes nothing. */
    c->born = resumed && c->offered.sess != NULL ? c->offered.born : time(NULL);
    if (resumed && c->offered.sess == NULL)
        c->refused = true;
    if (!resumed && c->key.len != 0 && chosen_blind(c)) {
        LOG(LOG_DEBUG, "nothing kept: a function chose the GnuTLS client's identity");
        c->refused = true;
    }
    c->resumed_ours = resumed && c->offered.sess != NULL;
    /* A resumed session's certificates are its session's: so is its bound
     * (decoding them again cost a tenth of a resumption). A connection that
     * will publish nothing needs none. */
    c->until = c->resumed_ours                  ? c->offered.expires
               : c->key.len == 0 || c->refused ? 0
                                                : gconn_chain_until(s);
    pooled_free(&c->offered);
    if (!c->resumed_ours) {
        passed(c);
        return 0;
    }
    return judge(c);
}

int gconn_on_message(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                     const gnutls_datum_t *msg)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return 0;
    /* A TLS 1.3 ticket, after the handshake: the session data holds it
     * now (measured: one hook call per ticket, each with its own data). */
    if (htype == GNUTLS_HANDSHAKE_NEW_SESSION_TICKET && when == GNUTLS_HOOK_POST && incoming &&
        c->done && !c->refused && c->key.len != 0 &&
        G(gnutls_protocol_get_version)(s) == GNUTLS_TLS1_3) {
        gnutls_datum_t d = {NULL, 0};
        if (G(gnutls_session_get_data2)(s, &d) == 0 && d.data != NULL && d.size > 4 &&
            d.size <= MAX_TICKET_BYTES * 4)
            gconn_hold(c, d.data, d.size, true);
        greal_free(d.data);
        gconn_write_through(c);
    }
    if (c->app_hook != NULL &&
        (c->app_htype == GNUTLS_HANDSHAKE_ANY || c->app_htype == htype) &&
        (c->app_when == GNUTLS_HOOK_BOTH || c->app_when == (int)when))
        return c->app_hook(s, htype, when, incoming, msg);
    return 0;
}

bool gconn_app_hook(gnutls_session_t s, unsigned htype, int when, gnutls_handshake_hook_func f)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return false;
    c->app_hook = f;
    c->app_htype = htype;
    c->app_when = when;
    /* The shim's hook then hears every message, and passes on the ones
     * the program asked for. */
    if (f != NULL)
        G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH,
                                              gconn_on_message);
    else
        G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET,
                                              GNUTLS_HOOK_POST, gconn_on_message);
    return true;
}

/* A resumed connection refused by the program's own check: what its
 * server's sessions carry no longer passes, and none is offered again. */
void gconn_refused(gnutls_session_t s)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return;
    c->refused = true;
    pthread_mutex_lock(&gconn_lock);
    if (c->failed == 0)
        gconn_unwatch(c);
    pthread_mutex_unlock(&gconn_lock);
    gconn_unreserve(c);
    if (c->resumed_ours && c->key.len != 0)
        pool_refuse(&c->key);
}
