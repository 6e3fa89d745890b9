/* GnuTLS client sessions (conn.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "conn.h"
#include "flush.h"
#include "observer.h"
#include "fork.h"
#include "judge.h"
#include "log.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"
#include "store.h"
#include "verdict.h"

struct gconn {
    UT_hash_handle hh;
    gnutls_session_t s;
    struct gsettings set;
    struct key key;
    struct gidentity id;
    bool started, done, app_data, refused;
    bool ended;            /* the first handshake completed (done: and passed) */
    bool resumed_ours;     /* resumed from the session the shim offered */
    bool moved;            /* application data moved after the handshake */
    bool watched;          /* counted in watching */
    bool through;          /* its newest ticket was offered to the store */
    int failed;            /* the judgment's error (0: none) */
    struct pooled offered; /* sess NULL: nothing offered */
    time_t born;           /* the verifying full handshake behind this one */
    time_t until;          /* the earliest notAfter of the chain, or staple's nextUpdate */
    unsigned gen;
    unsigned n_held;
    struct pooled *held;   /* pool_size slots, newest first */
    gnutls_handshake_hook_func app_hook;
    unsigned app_htype;
    int app_when;
    /* Tickets the program took and the store may have at exit: ended
     * should its check of the peer fail after all. */
    unsigned n_reserved;
    void *reserved[4];
};

static struct gconn *conns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pool_size = 8;
static long max_age = 3600;
unsigned gconn_watching;

void gconn_init(const struct config *cfg)
{
    pool_size = cfg->pool_size;
    max_age = cfg->max_age;
    fork_guard(&lock);
}

/* A session is used by one thread at a time; the table's lock guards the
 * table, and the sessions a connection holds, which the exit flush reads
 * from another thread. The pool's lock is never taken under it (a fork
 * takes the pool's first). */
static struct gconn *get(gnutls_session_t s)
{
    struct gconn *c;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(conns, &s, c);
    pthread_mutex_unlock(&lock);
    return c;
}

static int on_message(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                      const gnutls_datum_t *msg);
static void drop_held(struct gconn *c), release(struct gconn *c);
static int judge(struct gconn *c);

void gconn_new(gnutls_session_t s, unsigned flags)
{
    struct gconn *c = calloc(1, sizeof *c), *old;
    if (c == NULL)
        return;
    c->s = s;
    c->set.flags = flags;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(conns, &s, old);
    if (old != NULL)
        HASH_DEL(conns, old); /* freed without gnutls_deinit, address reused */
    HASH_ADD_PTR(conns, s, c);
    pthread_mutex_unlock(&lock);
    /* One hook per session (a second call replaces the first): only on
     * tickets, until the program sets one of its own (gconn_app_hook). */
    G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET, GNUTLS_HOOK_POST,
                                          on_message);
    if (old != NULL) {
        drop_held(old);
        release(old);
    }
}

static void drop_held(struct gconn *c)
{
    for (unsigned i = 0; i < c->n_held; i++)
        pooled_free(&c->held[i]);
    c->n_held = 0;
}

/* Under the lock: held session i leaves the connection. */
static struct pooled unhold(struct gconn *c, unsigned i)
{
    struct pooled p = c->held[i];
    memmove(&c->held[i], &c->held[i + 1], (c->n_held - i - 1) * sizeof *c->held);
    c->n_held--;
    return p;
}

/* A session of c's (a reference of its own), with c's times. */
static struct pooled earned(const struct gconn *c, void *sess)
{
    time_t e = c->born + (max_age < MAX_LIFETIME ? max_age : MAX_LIFETIME);
    return (struct pooled){.ops = &gtls_ops, .sess = sess, .born = c->born,
                           .expires = c->until < e ? c->until : e};
}

static void hold(struct gconn *c, const unsigned char *data, size_t len, bool tls13)
{
    if (c->held == NULL && (c->held = calloc((size_t)pool_size, sizeof *c->held)) == NULL)
        return;
    struct pooled p = earned(c, gsession_new(data, len, tls13));
    if (p.sess == NULL)
        return;
    struct pooled old = {0};
    pthread_mutex_lock(&lock);
    if (c->n_held == (unsigned)pool_size)
        old = c->held[--c->n_held];
    memmove(&c->held[1], &c->held[0], c->n_held * sizeof *c->held);
    c->held[0] = p;
    c->n_held++;
    pthread_mutex_unlock(&lock);
    pooled_free(&old);
}

/* What the connection earned goes to the pool once the program is done
 * with it: a program checks the peer by hand after the handshake, while
 * tickets may already have arrived (wget asks for the session data right
 * after the handshake, which waits for one). */
static bool may_publish(const struct gconn *c)
{
    return c->done && c->moved && !c->refused && c->failed == 0 && c->key.len != 0;
}

/* A program may never end its connection nor exit cleanly (apt's https
 * method ends in _exit on SIGINT): once the connection may publish, its
 * newest ticket is offered to the store at once (pool_write_through: the
 * first of each server), and a TLS 1.3 ticket that went leaves it. */
static void write_through(struct gconn *c)
{
    /* Only the session's own thread sets through. */
    if (c->through || !may_publish(c) || c->n_held == 0)
        return;
    pthread_mutex_lock(&lock);
    struct pooled p = {0};
    if (c->n_held > 0 && gtls_ops.up_ref(c->held[0].sess))
        p = c->held[0]; /* a held session carries no chain (hold) */
    c->through = true;
    pthread_mutex_unlock(&lock);
    if (p.sess == NULL)
        return;
    struct pooled gone = {0};
    if (pool_write_through(&c->key, &p, c->gen) && gtls_ops.is_tls13(p.sess)) {
        pthread_mutex_lock(&lock);
        for (unsigned i = 0; i < c->n_held && gone.sess == NULL; i++)
            if (gtls_ops.same_ticket(c->held[i].sess, p.sess))
                gone = unhold(c, i);
        pthread_mutex_unlock(&lock);
    }
    pooled_free(&gone);
    gtls_ops.free(p.sess);
}

static void settle(struct gconn *c)
{
    bool keep = may_publish(c);
    for (unsigned i = c->n_held; i-- > 0;) {
        if (keep)
            pool_put(&c->key, c->held[i], c->gen);
        else
            pooled_free(&c->held[i]);
    }
    c->n_held = 0;
}

static void unreserve(struct gconn *c)
{
    for (unsigned i = 0; i < c->n_reserved; i++) {
        pool_unreserve(&gtls_ops, c->reserved[i]);
        gtls_ops.free(c->reserved[i]);
    }
    c->n_reserved = 0;
}

static void unwatch(struct gconn *c)
{
    if (c->watched) {
        c->watched = false;
        __atomic_sub_fetch(&gconn_watching, 1, __ATOMIC_RELAXED);
    }
}

static void watch(struct gconn *c)
{
    if (!c->watched) {
        c->watched = true;
        __atomic_add_fetch(&gconn_watching, 1, __ATOMIC_RELAXED);
    }
}

static void release(struct gconn *c)
{
    unwatch(c);
    settle(c);
    /* Tickets the program took from a connection that never carried data
     * are no one's to publish. */
    if (!may_publish(c))
        unreserve(c);
    for (unsigned i = 0; i < c->n_reserved; i++)
        gtls_ops.free(c->reserved[i]);
    pooled_free(&c->offered);
    free(c->held);
    free(c->set.prio);
    free(c);
}

void gconn_free(gnutls_session_t s)
{
    struct gconn *c;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(conns, &s, c);
    if (c != NULL)
        HASH_DEL(conns, c);
    pthread_mutex_unlock(&lock);
    if (c != NULL)
        release(c);
}

/* What each live connection would publish is moved out under the lock,
 * with a copy of its key (the connection may be freed meanwhile), and
 * handed to the pool after it. */
struct leftover {
    struct leftover *next;
    struct key key;
    unsigned gen, n;
    struct pooled *held;
    unsigned n_reserved;   /* taken by the program, to be unreserved */
    void *reserved[4];
};

void gconn_settle_all(void)
{
    struct gconn *c, *tmp;
    struct leftover *list = NULL;
    pthread_mutex_lock(&lock);
    HASH_ITER(hh, conns, c, tmp) {
        bool keep = may_publish(c);
        if ((keep && c->n_held == 0) || (!keep && c->n_reserved == 0))
            continue;
        struct leftover *l = malloc(sizeof *l);
        if (l == NULL)
            continue;
        *l = (struct leftover){list, c->key, c->gen, 0, NULL, 0, {0}};
        if (keep) {
            l->n = c->n_held;
            l->held = c->held;
            c->held = NULL;
            c->n_held = 0;
        } else {
            l->n_reserved = c->n_reserved;
            memcpy(l->reserved, c->reserved, sizeof l->reserved);
            c->n_reserved = 0;
        }
        list = l;
    }
    pthread_mutex_unlock(&lock);
    while (list != NULL) {
        struct leftover *l = list;
        list = l->next;
        for (unsigned i = l->n; i-- > 0;)
            pool_put(&l->key, l->held[i], l->gen);
        for (unsigned i = 0; i < l->n_reserved; i++) {
            pool_unreserve(&gtls_ops, l->reserved[i]);
            gtls_ops.free(l->reserved[i]);
        }
        free(l->held);
        free(l);
    }
}

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
    struct gconn *c = get(s);
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

/* When the staple for a certificate stops counting: its nextUpdate, or
 * without one, as GnuTLS judges it (check_ocsp_response, lib/cert-session.c
 * 3.7.9), MAX_OCSP_VALIDITY_SECS (15 days) after its thisUpdate. */
static time_t staple_until(gnutls_session_t s, unsigned i)
{
    gnutls_datum_t d = {NULL, 0};
    if (G(gnutls_ocsp_status_request_get2)(s, i, &d) != 0 || d.data == NULL)
        return (time_t)1 << 62;
    gnutls_ocsp_resp_t resp = NULL;
    time_t t = 0, this_update = -1, next_update = -1;
    unsigned status;
    if (G(gnutls_ocsp_resp_init)(&resp) == 0 && resp != NULL &&
        G(gnutls_ocsp_resp_import)(resp, &d) == 0 &&
        G(gnutls_ocsp_resp_get_single)(resp, 0, NULL, NULL, NULL, NULL, &status, &this_update,
                                        &next_update, NULL, NULL) == 0)
        t = next_update != -1 ? next_update
            : this_update != -1 ? this_update + 15 * 24 * 3600
                                : 0;
    if (resp != NULL)
        G(gnutls_ocsp_resp_deinit)(resp);
    return t > 0 ? t : 0;
}

/* No session outlives a certificate of the server's chain, nor the OCSP
 * response stapled for one. */
static time_t chain_until(gnutls_session_t s)
{
    unsigned n = 0;
    const gnutls_datum_t *certs = G(gnutls_certificate_get_peers)(s, &n);
    time_t until = (time_t)1 << 62; /* no certificate: nothing to outlive */
    for (unsigned i = 0; certs != NULL && i < n; i++) {
        gnutls_x509_crt_t crt = NULL;
        time_t t = 0;
        if (G(gnutls_x509_crt_init)(&crt) == 0 && crt != NULL &&
            G(gnutls_x509_crt_import)(crt, &certs[i], GNUTLS_X509_FMT_DER) == 0)
            t = G(gnutls_x509_crt_get_expiration_time)(crt);
        if (crt != NULL)
            G(gnutls_x509_crt_deinit)(crt);
        t = t > 0 ? t : 0;
        time_t st = staple_until(s, i);
        until = t < until ? t : until;
        until = st < until ? st : until;
    }
    return until;
}

/* TLS 1.2 session data is whole once the handshake is: taken now. (A TLS
 * 1.3 session waits for its tickets, which come later: on_message.) */
static void take_data(struct gconn *c)
{
    gnutls_datum_t d = {NULL, 0};
    if (G(gnutls_session_get_data2)(c->s, &d) == 0 && d.data != NULL && d.size > 4 &&
        d.size <= MAX_TICKET_BYTES * 4)
        hold(c, d.data, d.size, false);
    greal_free(d.data);
}

/* The handshake passed, or its judgment did: the connection is the
 * program's, and what it earns is held until data moves. */
static void passed(struct gconn *c)
{
    c->done = true;
    if (c->key.len == 0 || c->refused)
        return;
    pthread_mutex_lock(&lock);
    watch(c);
    pthread_mutex_unlock(&lock);
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
    pthread_mutex_lock(&lock);
    watch(c);
    pthread_mutex_unlock(&lock);
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
        watch(c);
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
    struct gconn *c = ret == 0 ? get(s) : NULL;
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
                                                : chain_until(s);
    pooled_free(&c->offered);
    if (!c->resumed_ours) {
        passed(c);
        return 0;
    }
    return judge(c);
}

static int on_message(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                      const gnutls_datum_t *msg)
{
    struct gconn *c = get(s);
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
            hold(c, d.data, d.size, true);
        greal_free(d.data);
        write_through(c);
    }
    if (c->app_hook != NULL &&
        (c->app_htype == GNUTLS_HANDSHAKE_ANY || c->app_htype == htype) &&
        (c->app_when == GNUTLS_HOOK_BOTH || c->app_when == (int)when))
        return c->app_hook(s, htype, when, incoming, msg);
    return 0;
}

bool gconn_app_hook(gnutls_session_t s, unsigned htype, int when, gnutls_handshake_hook_func f)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return false;
    c->app_hook = f;
    c->app_htype = htype;
    c->app_when = when;
    /* The shim's hook then hears every message, and passes on the ones
     * the program asked for. */
    if (f != NULL)
        G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH, on_message);
    else
        G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET,
                                              GNUTLS_HOOK_POST, on_message);
    return true;
}

/* Takes a TLS 1.3 ticket of the program's out of the connection's held
 * sessions; true when it was there and the program took it after a
 * handshake the connection may publish from (it is then reserved for the
 * store, as on the OpenSSL side: a program that takes each ticket for a
 * cache of its own, wget does, but runs once per request never offers it). */
static bool take_held(struct gconn *c, const void *mine, bool reserve)
{
    struct pooled found[4];
    unsigned n = 0;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; c != NULL && i < c->n_held;) {
        if (!c->held[i].ops->is_tls13(c->held[i].sess) ||
            !gtls_ops.same_ticket(c->held[i].sess, mine) || n == sizeof found / sizeof *found) {
            i++;
            continue;
        }
        found[n++] = unhold(c, i);
    }
    pthread_mutex_unlock(&lock);
    bool reserved = false;
    for (unsigned i = 0; i < n; i++) {
        if (reserve && !reserved && c->done && !c->refused &&
            c->n_reserved < sizeof c->reserved / sizeof *c->reserved &&
            gtls_ops.up_ref(found[i].sess)) {
            c->reserved[c->n_reserved++] = found[i].sess;
            pool_reserve(&c->key, found[i], c->gen);
            reserved = true;
        } else {
            pooled_free(&found[i]);
        }
    }
    return reserved;
}

/* A TLS 1.3 ticket the program takes or offers is its own (core/ledger.h):
 * it leaves the connection and every pool; false: it offers one the shim
 * offered first. */
static bool app_owns(gnutls_session_t s, const void *data, size_t size, bool offers)
{
    struct gconn *c = get(s);
    /* What a program takes from a TLS 1.2 session (reusable) or a TLS 1.3
     * one before any ticket (4 bytes of placeholder, measured) is no
     * ticket: it would only push real ones out of the disowned ring. */
    if (data == NULL || size <= 4 ||
        (!offers && G(gnutls_protocol_get_version)(s) != GNUTLS_TLS1_3))
        return true;
    void *mine = gsession_new(data, size, true);
    if (mine == NULL)
        return true;
    bool may = true, reserved = take_held(c, mine, !offers);
    /* One taken after it went to the store (write_through) stays there,
     * for a process that may end in _exit (glib-networking's and libcurl's
     * hooks take each ticket for a cache a one-shot never offers from). */
    if (!offers && (reserved || (c != NULL && c->through && c->key.len != 0)))
        pool_took(&c->key, &gtls_ops, mine);
    else if (offers && gtls_ops.is_tls13(mine))
        may = pool_app_offers(&gtls_ops, mine);
    else
        pool_discard(NULL, &gtls_ops, mine);
    gtls_ops.free(mine);
    return may;
}

bool gconn_app_set(gnutls_session_t s, const void *data, size_t size)
{
    struct gconn *c = get(s);
    if (c != NULL && !c->started)
        c->app_data = true;
    return app_owns(s, data, size, true);
}

void gconn_app_took(gnutls_session_t s, const void *data, size_t size)
{
    app_owns(s, data, size, false);
}

/* The check set_verify_cert(2) installs: its host name (NULL: the
 * certificate is checked, no name) or typed data, read when the key is;
 * seen: the function it installs went through the shim's hook. */
void gconn_verify_cert(gnutls_session_t s, const char *host, const gnutls_typed_vdata_st *data,
                       unsigned n, unsigned flags, bool seen, bool two)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return;
    c->set.verify_set = true;
    c->set.verify_unseen = !seen;
    if (!seen)
        c->set.verify_fn = NULL;
    c->set.verify_host = host;
    c->set.verify_data = data;
    c->set.verify_n = n;
    c->set.verify_flags = flags;
    c->set.vcert_calls++, c->set.vcert2 = two, c->set.vcert_after_prio = c->set.prio_applied;
}

/* The function GnuTLS will call: the program's, or GnuTLS's own check
 * (inner: set_verify_cert is setting it); none at all (NULL) is no check,
 * whatever set_verify_cert installed before. */
void gconn_verify_function(gnutls_session_t s, gnutls_certificate_verify_function *fn, bool inner)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return;
    c->set.verify_fn = fn;
    if (!inner) {
        c->set.verify_set = false;
        c->set.verify_unseen = false;
    }
}

/* Before a record function: a connection refused by its judgment moves no
 * data, as a session whose handshake failed does not. */
int gconn_io_before(gnutls_session_t s)
{
    struct gconn *c = get(s);
    /* Refused, or its judgment still to come. */
    return c != NULL && (c->failed != 0 || (c->ended && !c->done))
               ? GNUTLS_E_UNAVAILABLE_DURING_HANDSHAKE
               : 0;
}

/* After one: data moved (ret > 0), and what the connection earned may be
 * published when it ends; the program's first write leaves at once. */
void gconn_io_after(gnutls_session_t s, ssize_t ret, bool sent)
{
    if (ret <= 0)
        return;
    pthread_mutex_lock(&lock);
    struct gconn *c;
    HASH_FIND_PTR(conns, &s, c);
    bool now = c != NULL && c->done && !c->moved;
    if (now) {
        c->moved = true;
        if (c->failed == 0)
            unwatch(c);
    }
    pthread_mutex_unlock(&lock);
    if (now && sent)
        gflush_first_write(s, c->set.own_transport);
    if (now)
        write_through(c);
}

void gconn_priority(gnutls_session_t s, const char *text, bool applied)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return;
    c->set.prio_applied += applied;
    free(c->set.prio);
    c->set.prio = text != NULL ? strdup(text) : NULL;
}

/* A name too long for DNS, or holding a NUL, is no name the shim can key
 * by: none (the socket's address then). */
void gconn_server_name(gnutls_session_t s, const void *name, size_t len)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return;
    c->set.sni[0] = '\0';
    if (name != NULL && len < sizeof c->set.sni && memchr(name, '\0', len) == NULL) {
        memcpy(c->set.sni, name, len);
        c->set.sni[len] = '\0';
    }
}

void gconn_own_transport(gnutls_session_t s)
{
    struct gconn *c = get(s);
    if (c != NULL)
        c->set.own_transport = true;
}

/* A resumed connection refused by the program's own check: what its
 * server's sessions carry no longer passes, and none is offered again. */
void gconn_refused(gnutls_session_t s)
{
    struct gconn *c = get(s);
    if (c == NULL)
        return;
    c->refused = true;
    pthread_mutex_lock(&lock);
    if (c->failed == 0)
        unwatch(c);
    pthread_mutex_unlock(&lock);
    unreserve(c);
    if (c->resumed_ours && c->key.len != 0)
        pool_refuse(&c->key);
}
