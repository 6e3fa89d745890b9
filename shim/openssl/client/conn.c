/* A client connection's life (conn.h).
 *
 * Sessions received before the application used the connection are held
 * on it, not published: a TLS 1.2 session arrives inside the handshake,
 * before the application had a chance to reject the peer (curl checks the
 * host name itself, after the handshake), and a connection that is refused
 * or fails must leave nothing behind. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "appsess.h"
#include "conn.h"
#include "ctx.h"
#include "exdata.h"
#include "judge/judge.h"
#include "log.h"
#include "judge/ocsp.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"
#include "settings.h"
#include "store.h"
#include "tcp.h"
#include "verdict.h"

struct conn {
    struct key key;
    SSL_SESSION *offered;   /* our reference to what we set, until done */
    bool offered_kept;      /* from done on: the shim offered what resumed */
    bool resumed;           /* ...and it resumed: the program may abandon it */
    struct chain offered_chain;
    struct chain chain;     /* the verified peer chain, from done on */
    STACK_OF(X509) *verified_chain; /* the judge's (SSL_get0_verified_chain) */
    time_t offered_born;
    time_t born;            /* the verifying full handshake behind this one */
    unsigned gen;           /* fork generation at begin */
    bool started, done, used, verified;
    bool shut;              /* the program sent its shutdown (conn_shutdown) */
    bool judged;            /* the status callback saw the kept staple */
    bool refused;           /* the judge refused the resumed connection */
    bool cert_asked;        /* a certificate callback ran (certcb.c) */
    unsigned char identity[32]; /* the client's, as the handshake began */
    bool pending;           /* ...or a verify callback suspended the judgment */
    int refusal;            /* the reason pushed for it (SSL_R_...) */
    bool push;              /* a resumed TLS 1.2 handshake's first write waits (tcp.c) */
    unsigned n_held;
    struct pooled *held;    /* pool_size slots, allocated on demand */
    struct pooled latest;   /* the newest TLS 1.3 ticket, see conn_session */
    bool latest_reserved;   /* a copy waits to reach the store at exit */
};

static int conn_index = -1;
static int pool_size;
static long max_age;
_Thread_local const SSL *conn_quiet;
_Thread_local unsigned long conn_quiet_epoch;
unsigned long conn_epoch;

static struct conn *get(SSL *s)
{
    return conn_index >= 0 ? R(SSL_get_ex_data)(s, conn_index) : NULL;
}

/* A program may exit without ever freeing a connection (wget does; Ruby
 * frees one only when its garbage collector runs), and the newest ticket
 * then never leaves it. With a store, once the connection has earned that
 * ticket, a copy is reserved to be written there at exit: at exit no
 * SSL_clear can make OpenSSL offer it again. The reservation is cancelled
 * when the ticket goes its ordinary way first (published when the
 * connection is freed, or dropped); one the application reuses or takes is
 * discarded from the reservations by pool_discard.
 *
 * A process may not exit cleanly either: apt 3.0's https method
 * (methods/connect.cc) neither shuts down nor frees its connection, and
 * ends in _exit from its SIGINT handler (methods/basehttp.cc, SigTerm),
 * the signal apt-helper's worker sends as it finishes
 * (apt-pkg/acquire-worker.cc). A resumed handshake earns one ticket from
 * an OpenSSL server, which is then the connection's newest and its first:
 * like the first ticket of each server that goes to the pool
 * (pool_write_through), it goes to the store at once, and the store has it
 * alone. Should the program still offer it again itself (SSL_clear after
 * SSL_shutdown), it takes it back from the store as the handshake starts
 * (pool_claim), unless another process took it first; then the
 * connection offers none of its own, never the same twice. */
static void reserve_latest(struct conn *c)
{
    if (!store_on() || c->latest.sess == NULL || c->latest_reserved || !c->done || !c->used ||
        !c->verified)
        return;
    if (pool_write_through(&c->key, &c->latest, c->gen)) {
        LOG(LOG_DEBUG, "a connection's newest TLS 1.3 ticket went to the store");
        pooled_free(&c->latest);
        return;
    }
    struct pooled copy = c->latest;
    copy.chain = chain_copy(&c->latest.chain);
    copy.ops->up_ref(copy.sess);
    pool_reserve(&c->key, copy, c->gen);
    c->latest_reserved = true;
}

static void unreserve_latest(struct conn *c)
{
    if (c->latest_reserved && c->latest.sess != NULL)
        pool_unreserve(&ossl_ops, c->latest.sess);
    c->latest_reserved = false;
}

static void drop_latest(struct conn *c)
{
    unreserve_latest(c);
    pooled_free(&c->latest);
}

/* Every session the connection keeps came through conn_session, which
 * needs a key: publishing is handing it to the pool. */
static void publish(struct conn *c, struct pooled p)
{
    if (p.app)
        pool_reserve(&c->key, p, c->gen);
    else
        pool_put(&c->key, p, c->gen);
}

/* The connection is ending, and OpenSSL will not offer its last ticket
 * again: the pool may have it now. */
static void settle_latest(struct conn *c)
{
    if (c->latest.sess != NULL && c->done && c->used && c->verified) {
        /* The pool ends its reservation (pool_put) and keeps its encoding. */
        c->latest_reserved = false;
        publish(c, c->latest);
        c->latest = (struct pooled){0};
    }
    drop_latest(c);
}

/* Born and expiry are fixed once the handshake behind the session is
 * known to be complete. */
static void stamp(struct conn *c, SSL *s, struct pooled *p)
{
    p->born = c->born;
    p->expires = session_expiry(p->sess, p->born, max_age, R(SSL_get_certificate)(s));
    if (p->chain.certs == NULL && p->chain.der == NULL && p->chain.staple == NULL &&
        !p->chain.lost)
        p->chain = chain_copy(&c->chain);
    /* The judge would refuse a chain with a certificate past its notAfter
     * (an intermediate's may come before the leaf's): offering it would be
     * a needless failure. */
    time_t chain_end = chain_expiry(chain_certs(&p->chain));
    if (chain_end < p->expires)
        p->expires = chain_end;
    /* A staple past its nextUpdate is not shown to a judge again: a full
     * handshake brings a fresh one. */
    if (c->key.staple) {
        time_t until = p->chain.lost ? 0 : ocsp_valid_until(p->chain.staple, p->chain.staple_len);
        if (until < p->expires)
            p->expires = until;
    }
}

static void publish_now(struct conn *c, SSL *s, struct pooled p)
{
    stamp(c, s, &p);
    publish(c, p);
}

static void publish_held(struct conn *c, SSL *s)
{
    for (unsigned i = 0; i < c->n_held; i++)
        publish_now(c, s, c->held[i]);
    c->n_held = 0;
}

/* A program may make another certificate the connection's own inside the
 * handshake (SSL_use_certificate in a verify callback): the session then
 * stands for a client the key does not name. */
static bool same_identity(const struct conn *c, SSL *s)
{
    struct ctx_parts parts;
    unsigned char now[32];
    bool same = ctx_connecting(R(SSL_get_SSL_CTX)(s), &parts) &&
                verdict_identity(s, &parts, now) && memcmp(now, c->identity, sizeof now) == 0;
    if (!same)
        LOG(LOG_DEBUG, "not kept: the client's identity changed during the handshake");
    return same;
}

static void set_verified_chain(struct conn *c, STACK_OF(X509) *chain)
{
    if (c->verified_chain != NULL)
        R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)c->verified_chain, (OPENSSL_sk_freefunc)R(X509_free));
    c->verified_chain = chain;
}

/* The staple a connection's sessions carry: the one the server sent in a
 * full handshake, or, on a resumed one, the one its session carried. One
 * too large, or that cannot be copied, is lost: the connection publishes
 * nothing (handshake_done). */
static struct chain kept_staple(struct conn *c, SSL *s, bool reused)
{
    struct chain k = {0};
    if (reused && c->offered != NULL) {
        k.staple = c->offered_chain.staple, k.staple_len = c->offered_chain.staple_len;
        k.lost = c->offered_chain.lost;
        c->offered_chain.staple = NULL, c->offered_chain.staple_len = 0;
        return k;
    }
    unsigned char *der = NULL;
    long len = R(SSL_ctrl)(s, SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP, 0, &der);
    if (len <= 0 || der == NULL)
        return k;
    if (len <= MAX_STAPLE_BYTES && (k.staple = malloc((size_t)len)) != NULL) {
        memcpy(k.staple, der, (size_t)len);
        k.staple_len = (size_t)len;
    } else {
        k.lost = true;
    }
    return k;
}

/* The application's judge refused a resumed connection: it fails as the
 * full handshake with that outcome fails (the reason libssl pushes on the
 * queue, the handshake call failing, no data moving after it), and the
 * server's sessions go. The fatal alert libssl would send cannot be: the
 * client's Finished has gone, and libssl sends no alert on request. */
static void push_refusal(const struct conn *c)
{
    R(ERR_new)();
    R(ERR_set_debug)(__FILE__, __LINE__, __func__);
    R(ERR_set_error)(ERR_LIB_SSL, c->refusal, NULL);
}

static void refuse(struct conn *c, SSL *s, int reason, const char *why)
{
    c->refused = true;
    c->refusal = reason;
    c->verified = false;
    pool_refuse(&c->key);
    push_refusal(c);
    /* A fatal alert marks the session not resumable (ssl3_send_alert,
     * ssl/s3_msg.c): a program that keeps it must not resume it. */
    SSL_SESSION *sess = R(SSL_get_session)(s);
    if (sess != NULL)
        R(SSL_CTX_remove_session)(R(SSL_get_SSL_CTX)(s), sess);
    R(SSL_set_shutdown)(s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    LOG(LOG_DEBUG, "a resumed connection refused: %s", why);
}

/* A resumed connection whose status callback OpenSSL did not call (TLS
 * 1.2), or that has none: it is shown the staple now, and judged. */
static void judge_staple(struct conn *c, SSL *s)
{
    /* Should the staple not fit on the connection, the callback judges
     * its absence, and that verdict is not kept. */
    if (!ocsp_present(s, &c->chain))
        c->verified = false;
    int verdict = c->key.judge ? ocsp_ask(s) : 1;
    if (verdict <= 0)
        refuse(c, s, verdict < 0 ? ERR_R_MALLOC_FAILURE : SSL_R_INVALID_STATUS_RESPONSE,
               "the application's status callback");
}

/* The key chose the session; the judge decides, now, under the
 * configuration the connection has at its end, in libssl's order: the
 * chain first, then the staple. A verify callback may suspend the
 * judgment (SSL_set_retry_verify), as it suspends a full handshake: the
 * call then fails with SSL_ERROR_WANT_RETRY_VERIFY, and the next
 * handshake call judges again. */
static void judge(struct conn *c, SSL *s)
{
    STACK_OF(X509) *built = NULL;
    struct ctx_parts parts = ctx_parts(R(SSL_get_SSL_CTX)(s));
    enum verdict v = judge_resumed(s, &parts, chain_certs(&c->chain), &built);
    if (built != NULL)
        set_verified_chain(c, built);
    c->pending = v == VERDICT_PENDING;
    if (v == VERDICT_REFUSED) {
        refuse(c, s, SSL_R_CERTIFICATE_VERIFY_FAILED, "the server's chain");
    } else if (v == VERDICT_UNJUDGED) {
        R(SSL_set_verify_result)(s, X509_V_ERR_NO_VALID_SCTS);
        refuse(c, s, SSL_R_CALLBACK_FAILED, "Certificate Transparency turned on after the offer");
    } else if (v == VERDICT_PASSED && c->key.staple && !c->judged) {
        judge_staple(c, s);
    }
}

static void handshake_done(struct conn *c, SSL *s)
{
    c->done = true;
    bool reused = R(SSL_session_reused)(s);
    c->offered_kept = c->offered != NULL;
    c->resumed = reused && c->offered_kept;
    struct chain staple = c->key.staple ? kept_staple(c, s, reused) : (struct chain){0};
    if (!reused)
        c->push = false; /* a full TLS 1.2 handshake ends with the server */
    stat_add(reused ? ST_RESUMED : ST_FULL);
    if (c->offered != NULL)
        pool_verdict(&c->key, reused);
    /* A resumed connection proves nothing new about the server: what it
     * earns inherits the moment of the full handshake that verified it. */
    c->born = reused && c->offered != NULL ? c->offered_born : time(NULL);
    c->verified = !(R(SSL_get_verify_mode)(s) & SSL_VERIFY_PEER) ||
                  R(SSL_get_verify_result)(s) == X509_V_OK;
    /* Resumed from a session the application supplied: the verdict was not
     * reached under this key, nor is its age known. Publish nothing. */
    if (reused && c->offered == NULL)
        c->verified = false;
    if (staple.lost)
        c->verified = false;
    /* A TLS 1.2 resumption gets no new-session callback; a ticket the
     * server renewed lives only in the connection's session. */
    SSL_SESSION *now = R(SSL_get_session)(s);
    if (reused && c->offered != NULL && now != NULL && !session_is_tls13(now) &&
        !session_same_ticket(now, c->offered))
        conn_session(s, now, false);
    if (c->offered != NULL) {
        R(SSL_SESSION_free)(c->offered);
        c->offered = NULL;
    }
    /* The chain the server sent, for the judge of the sessions it earns; a
     * session restored from the store has the leaf but not the chain. */
    STACK_OF(X509) *chain = R(SSL_get_peer_cert_chain)(s);
    if (chain != NULL)
        chain_set_certs(&c->chain, chain);
    else if (reused)
        c->chain = c->offered_chain, c->offered_chain = (struct chain){0};
    chain_free(&c->offered_chain);
    c->chain.staple = staple.staple, c->chain.staple_len = staple.staple_len;
    c->chain.lost = staple.lost;
    if (reused && c->offered_kept)
        judge(c, s);
}

static void notice_done(struct conn *c, SSL *s)
{
    if (!c->done && !R(SSL_in_init)(s) && !R(SSL_in_before)(s))
        handshake_done(c, s);
}

/* Callbacks that find a certificate's issuer in the chain compare it with
 * the session's own leaf object (IO::Socket::SSL's status callback does,
 * by address): a chain decoded from the store gets that object as its leaf. */
static STACK_OF(X509) *same_leaf(STACK_OF(X509) *chain, const SSL *s)
{
    X509 *peer = R(SSL_get0_peer_certificate)(s);
    OPENSSL_STACK *sk = (OPENSSL_STACK *)chain;
    X509 *first = chain != NULL && R(OPENSSL_sk_num)(sk) > 0 ? R(OPENSSL_sk_value)(sk, 0) : NULL;
    if (peer != NULL && first != NULL && first != peer && R(X509_cmp)(first, peer) == 0 &&
        R(X509_up_ref)(peer) == 1) {
        R(OPENSSL_sk_set)(sk, 0, peer);
        R(X509_free)(first);
    }
    return chain;
}

STACK_OF(X509) *conn_peer_chain(const SSL *s)
{
    struct conn *c = get((SSL *)s);
    if (c == NULL)
        return NULL;
    /* Inside a resumed handshake (its status callback), the chain behind
     * the offered session. */
    if (!c->done && c->offered != NULL && R(SSL_session_reused)(s))
        return same_leaf(chain_certs(&c->offered_chain), s);
    return c->done ? same_leaf(chain_certs(&c->chain), s) : NULL;
}

STACK_OF(X509) *conn_verified_chain(const SSL *s)
{
    const struct conn *c = get((SSL *)s);
    return c != NULL ? c->verified_chain : NULL;
}

void conn_status_before(SSL *s)
{
    struct conn *c = get(s);
    if (c == NULL || c->done || c->offered == NULL || !c->key.staple ||
        !R(SSL_session_reused)(s))
        return;
    c->judged = true;
    /* Should the staple not fit on the connection, the callback sees none
     * and judges that; the verdict is then not kept (nothing published). */
    if (c->offered_chain.lost || !ocsp_present(s, &c->offered_chain))
        c->offered_chain.lost = true;
}

void conn_status_after(SSL *s, int verdict)
{
    struct conn *c = get(s);
    if (c != NULL && c->judged && verdict <= 0)
        pool_refuse(&c->key);
}

void conn_session(SSL *s, SSL_SESSION *sess, bool app_kept)
{
    struct conn *c = get(s);
    /* A session earned after a certificate callback ran may hold the
     * identity it chose, which no key can show. */
    if (c == NULL || !c->started || c->key.len == 0 || c->cert_asked ||
        !R(SSL_SESSION_is_resumable)(sess) || !same_identity(c, s))
        return;
    /* A handshake run inside SSL_read receives its TLS 1.3 tickets in the
     * same call, before conn_after can notice the handshake ended. */
    notice_done(c, s);
    const unsigned char *ticket;
    size_t len;
    R(SSL_SESSION_get0_ticket)(sess, &ticket, &len);
    if (len > MAX_TICKET_BYTES)
        return;
    /* A private copy: OpenSSL later marks the object it handed us not
     * resumable (unclean SSL_free, fatal alert, single use in TLS 1.3). */
    struct pooled p = {.ops = &ossl_ops, .sess = R(SSL_SESSION_dup)(sess)};
    if (p.sess == NULL)
        return;
    /* Never early data: the application did not ask for it. */
    R(SSL_SESSION_set_max_early_data)(p.sess, 0);
    /* A TLS 1.2 session may be resumed by the application and the pool
     * alike; a TLS 1.3 ticket the application keeps is its own. */
    p.app = app_kept && session_is_tls13(p.sess);
    if (c->done && session_is_tls13(p.sess) && !p.app && !c->shut) {
        /* The newest ticket is also the connection's own session, which
         * OpenSSL offers again if the application reuses this SSL after
         * SSL_clear (wrk does). It waits on the connection until that is
         * ruled out; the one it displaces goes on. */
        stamp(c, s, &p);
        struct pooled prev = c->latest;
        bool prev_reserved = c->latest_reserved;
        c->latest = p;
        c->latest_reserved = false;
        reserve_latest(c);
        if (prev.sess == NULL)
            return;
        p = prev;
        /* Published below, the pool ends its reservation itself. */
        if (prev_reserved && !(c->used && c->verified))
            pool_unreserve(&ossl_ops, p.sess);
    }
    if (c->done && c->used && c->verified) {
        publish_now(c, s, p);
        return;
    }
    if (c->held == NULL && (c->held = calloc((size_t)pool_size, sizeof *c->held)) == NULL) {
        R(SSL_SESSION_free)(p.sess);
        return;
    }
    if (c->n_held == (unsigned)pool_size)
        pooled_free(&c->held[--c->n_held]);
    memmove(&c->held[1], &c->held[0], c->n_held * sizeof *c->held);
    c->held[0] = p;
    c->n_held++;
}

void conn_app_took(SSL *s, SSL_SESSION *sess)
{
    struct conn *c = get(s);
    if (c == NULL || c->key.len == 0 || sess == NULL || !session_is_tls13(sess))
        return;
    /* A program that takes each ticket for a cache of its own (links2
     * does) keeps it as one its new-session callback kept: with a store,
     * the copy reserved for it is still written there at exit, unless the
     * program offers or serializes the ticket first; a program run once
     * per request never offers what it took. */
    if (c->latest.sess != NULL && session_same_ticket(c->latest.sess, sess) &&
        c->latest_reserved) {
        c->latest_reserved = false;
        pooled_free(&c->latest);
        pool_took(&c->key, &ossl_ops, sess);
        return;
    }
    if (c->latest.sess != NULL && session_same_ticket(c->latest.sess, sess))
        drop_latest(c);
    for (unsigned i = 0; i < c->n_held;) {
        if (session_same_ticket(c->held[i].sess, sess)) {
            pooled_free(&c->held[i]);
            memmove(&c->held[i], &c->held[i + 1], (c->n_held - i - 1) * sizeof *c->held);
            c->n_held--;
        } else {
            i++;
        }
    }
    pool_discard(&c->key, &ossl_ops, sess);
}

static void offer(struct conn *c, SSL *s)
{
    /* SSL_set_session would put another method on a connection whose
     * method the application changed. */
    if (!settings_method_kept(s))
        return;
    struct pooled p;
    pool_take(&c->key, time(NULL), &p);
    if (p.sess == NULL)
        return;
    /* A staple that could not be kept exact is shown to no judge, and a
     * session whose chain cannot be shown to the judge is not offered. */
    if (p.chain.lost || chain_certs(&p.chain) == NULL) {
        pooled_free(&p);
        return;
    }
    SSL_SESSION *give = p.sess;
    if (R(SSL_set_session)(s, give) != 1) {
        pooled_free(&p);
        return;
    }
    c->offered = give;
    c->offered_chain = p.chain;
    c->offered_born = p.born;
    stat_add(ST_OFFERED);
    LOG(LOG_DEBUG, "offered a TLS %s session", session_is_tls13(give) ? "1.3" : "1.2");
    c->push = !session_is_tls13(give);
}

bool conn_offer_pending(const SSL *s)
{
    const struct conn *c = get((SSL *)s);
    return c != NULL && c->started && ((!c->done && c->offered != NULL) || c->pending);
}

static void not_quiet(void)
{
    __atomic_fetch_add(&conn_epoch, 1, __ATOMIC_ACQ_REL);
}

/* A program that gives up a connection the shim resumed before any
 * application data moved (it shuts it down, clears or frees it and never
 * read or wrote any) refuses what the session stood for, as a failed
 * handshake would: curl --pinnedpubkey, pinning the key of a renewed
 * certificate, checks the key once SSL_connect has returned and then calls
 * SSL_shutdown (seen in gdb with curl 7.88.1; 8.14.1 in tests/judge.bats),
 * and every session of the old certificate led to one failed run. The
 * server's sessions go at once, in the pool and in the store. */
static void notice_abandoned(struct conn *c)
{
    if (c->resumed && !c->used && !c->refused) {
        LOG(LOG_DEBUG, "a resumed connection abandoned before any data moved");
        pool_refuse(&c->key);
    }
    c->resumed = false;
}

static void release(struct conn *c)
{
    notice_abandoned(c);
    drop_latest(c);
    for (unsigned i = 0; i < c->n_held; i++)
        pooled_free(&c->held[i]);
    free(c->held);
    c->held = NULL;
    c->n_held = 0;
    if (c->offered != NULL)
        R(SSL_SESSION_free)(c->offered);
    c->offered = NULL;
    chain_free(&c->offered_chain);
    chain_free(&c->chain);
    set_verified_chain(c, NULL);
}

static void free_conn(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                      void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    if (ptr != NULL) {
        not_quiet();
        settle_latest(ptr);
        release(ptr);
        free(ptr);
    }
}

/* A fresh state, as zeroed but for the key's bytes and server name, which
 * nothing reads before key_build writes them: zeroing them too cost 3,600
 * instructions a connection. */
_Static_assert(offsetof(struct conn, key) == 0 && offsetof(struct key, bytes) == sizeof(size_t) &&
                   offsetof(struct key, server) == offsetof(struct key, bytes) + KEY_MAX &&
                   offsetof(struct key, hash) ==
                       offsetof(struct key, server) + sizeof(((struct key *)0)->server),
               "struct key: len, bytes, server, then the rest");

static void reset(struct conn *c)
{
    c->key.len = 0;
    c->key.server[0] = '\0';
    memset((char *)c + offsetof(struct key, hash), 0, sizeof *c - offsetof(struct key, hash));
}

static struct conn *new_conn(void)
{
    struct conn *c = malloc(sizeof *c);
    if (c != NULL)
        reset(c);
    return c;
}

void conn_init(const struct config *cfg)
{
    pool_size = cfg->pool_size;
    max_age = cfg->max_age;
    atomic_only(&conn_epoch, sizeof conn_epoch);
    /* SSL_dup copies ex_data pointers; the copy must not share our state. */
    conn_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, exdata_dup_none,
                                            free_conn);
}

static struct conn *get_or_create(SSL *s)
{
    struct conn *c = get(s);
    if (c != NULL || conn_index < 0)
        return c;
    c = new_conn();
    if (c == NULL)
        return NULL;
    if (R(SSL_set_ex_data)(s, conn_index, c) != 1) {
        free(c);
        return NULL;
    }
    return c;
}

/* SSL_set_connect_state puts a finished connection back before its
 * handshake without SSL_clear (openssl s_client -reconnect does so after
 * SSL_shutdown), and the next handshake call clears it first, as it clears
 * every connection in that state (state_machine, ssl/statem/statem.c, 3.0
 * and 3.5): the session is kept and offered again, and the method the last
 * handshake negotiated gives way to the connection's first. Unseen, that
 * handshake left its ticket in a pool, which offered it to another
 * connection too. The clear is made here, a moment earlier, with what
 * SSL_clear's hook does around it: the connection's life ends as a cleared
 * one's, and the handshake begins as any other, whose own offer leaves the
 * pools (pool_claim). */
static bool restart(SSL *s)
{
    appsess_clearing(s);
    if (R(SSL_clear)(s) != 1)
        return false;
    conn_cleared(s);
    return true;
}

void conn_begin(SSL *s)
{
    /* A library bound straight to libssl (PHP loads libcurl with
     * RTLD_DEEPBIND) calls past every hook: it replaces the shim's
     * new-session callback, and its reads and writes pass unseen; only
     * libssl's calls to itself would reach the shim. Its connections are
     * left alone entirely, as without the shim. */
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    struct ctx_parts parts;
    if (!ctx_connecting(ctx, &parts))
        return;
    struct conn *c = get_or_create(s);
    if (c == NULL)
        return;
    /* A finished connection put back in connect state begins again. */
    if (c->started && c->done && !restart(s))
        return;
    if (c->started)
        return;
    c->started = true;
    c->gen = pool_generation();
    stat_add(ST_HANDSHAKES);
    verdict_key(s, settings_peek(s), &parts, store_on(), &c->key);
    if (c->key.len != 0 && !verdict_identity(s, &parts, c->identity))
        key_fail(&c->key);
    SSL_SESSION *own = R(SSL_get_session)(s);
    /* The application offers a session of its own (or SSL_clear kept the
     * last one): leave it alone, and make sure no pool or store hands the
     * same ticket to another connection. A ticket it serialized is the
     * pool's too (hooks.c: i2d_SSL_SESSION): if the shim offered it first,
     * here or in another process, this connection offers none of its own
     * rather than offer it a second time. */
    /* The claim is made whatever the method: a connection moved to another
     * context offers its own ticket as any other. Taking it back passes
     * through SSL_set_session, which puts back 3.0's context method or
     * 3.5's original one (settings.h): where the connection has its
     * context's method, that is no change for a program that never set
     * one of its own. */
    if (own != NULL && c->key.len != 0 && session_is_tls13(own) &&
        !pool_claim(&c->key, &ossl_ops, own) &&
        R(SSL_get_ssl_method)(s) == R(SSL_CTX_get_ssl_method)(ctx) &&
        R(SSL_set_session)(s, NULL) == 1) {
        LOG(LOG_DEBUG, "the application offers a ticket offered already; it offers none");
        own = NULL;
    }
    if (own != NULL) {
        appsess_begin(s, own);
        return;
    }
    if (c->key.len != 0)
        offer(c, s);
}

bool conn_after(SSL *s, int ret, enum io io)
{
    struct conn *c = get(s);
    if (c == NULL || !c->started)
        return false;
    bool was_done = c->done, was_refused = c->refused;
    notice_done(c, s);
    if (c->pending && was_done && ret > 0 && io == IO_HANDSHAKE)
        judge(c, s);
    if (c->pending)
        return ret > 0;
    /* The refused call fails; so does every later handshake call, as on a
     * connection whose handshake failed (reads and writes find it shut). */
    if (was_refused && ret > 0 && io == IO_HANDSHAKE)
        push_refusal(c);
    if (c->refused)
        return ret > 0 && (!was_refused || io == IO_HANDSHAKE);
    /* A completed handshake is not use: the application may still reject
     * the peer. Data read or written is. */
    if (ret <= 0 || !c->done || io == IO_HANDSHAKE)
        return false;
    if (io == IO_WRITE && c->push) {
        tcp_push(R(SSL_get_wfd)(s));
        c->push = false;
    }
    if (!c->used) {
        c->used = true;
        if (c->verified)
            publish_held(c, s);
        if (c->shut)
            settle_latest(c);
        else
            reserve_latest(c);
    }
    if (!c->push) {
        conn_quiet = s;
        conn_quiet_epoch = __atomic_load_n(&conn_epoch, __ATOMIC_ACQUIRE);
    }
    return false;
}

/* The newest ticket waits on its connection because OpenSSL offers it
 * again when the program reuses the SSL after SSL_clear (wrk's ssl_close:
 * SSL_shutdown, then SSL_clear, then SSL_connect again). But a connection
 * the program shut down may wait long to be freed: Node.js 20 tries a
 * name's addresses in turn (lib/net.js, internalConnectMultiple;
 * autoSelectFamily, on by default since Node.js 20), wraps the socket of
 * each address after the first in a new TLSWrap (lib/_tls_wrap.js,
 * kReinitializeHandle), and frees that one's SSL only when its garbage
 * collector runs or the process ends (localhost: ::1 refused, then
 * 127.0.0.1); Ruby frees an SSL only in its garbage collector. A resumed
 * handshake earns one ticket from an OpenSSL server, its newest: held, it
 * left the next connection nothing to offer, and every other one resumed.
 * So once the program has sent its shutdown, that ticket and any later
 * one go their ordinary way, as from a freed connection. A program that
 * reuses the connection after all takes its ticket back from the pool as
 * the handshake starts (pool_claim), unless another connection offered it
 * in between: then it offers none of its own (the shim may offer it
 * another), and no ticket is offered twice. */
void conn_shutdown(SSL *s)
{
    struct conn *c = get(s);
    if (c == NULL || !c->started || c->shut || !(R(SSL_get_shutdown)(s) & SSL_SENT_SHUTDOWN))
        return;
    notice_abandoned(c);
    c->shut = true;
    /* One not earned yet waits for the connection's first use, or goes
     * when it is freed. */
    if (c->latest.sess != NULL && c->done && c->used && c->verified) {
        LOG(LOG_DEBUG, "a shut down connection's newest TLS 1.3 ticket goes to the pool");
        settle_latest(c);
    }
}

void conn_cert_asked(SSL *s)
{
    struct conn *c = get(s);
    if (c != NULL)
        c->cert_asked = true;
}

bool conn_clearing(SSL *s)
{
    struct conn *c = get(s);
    /* libssl clears every connection as its first handshake starts */
    return c != NULL && c->started && !R(SSL_in_before)(s);
}

void conn_cleared(SSL *s)
{
    struct conn *c = get(s);
    if (c == NULL)
        return;
    not_quiet();
    /* SSL_clear keeps the session of a cleanly shut down connection, and
     * the next handshake offers it: then the last ticket is the
     * application's, not the pool's. */
    SSL_SESSION *kept = R(SSL_get_session)(s);
    if (kept != NULL && c->latest.sess != NULL && session_same_ticket(kept, c->latest.sess))
        drop_latest(c);
    settle_latest(c);
    release(c);
    reset(c);
}
