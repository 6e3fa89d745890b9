/* The sessions a client connection earns (connstate.h): held, published,
 * or waiting on the connection as its newest ticket.
 *
 * Sessions received before the application used the connection are held
 * on it, not published: a TLS 1.2 session arrives inside the handshake,
 * before the application had a chance to reject the peer (curl checks the
 * host name itself, after the handshake), and a connection that is refused
 * or fails must leave nothing behind. */
#include <stdlib.h>
#include <string.h>

#include "connstate.h"
#include "ctx.h"
#include "judge/ocsp.h"
#include "ledger.h"
#include "log.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"
#include "store.h"
#include "verdict.h"

static int pool_size;
static long max_age;

void conn_keep_init(const struct config *cfg)
{
    pool_size = cfg->pool_size;
    max_age = cfg->max_age;
}

/* A program may exit without ever freeing a connection (wget does; Ruby
 * frees one only when its garbage collector runs), and the newest ticket
 * then never leaves it. With a store, once the connection has earned that
 * ticket, a copy is reserved to be written there at exit: at exit no
 * SSL_clear can make OpenSSL offer it again. The reservation is cancelled
 * when the ticket goes its ordinary way first (published when the
 * connection is freed, or dropped); one the application reuses or takes is
 * discarded from the reservations by ledger_disown.
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
 * (ledger_claim), unless another process took it first; then the
 * connection offers none of its own, never the same twice. */
void conn_reserve_latest(struct conn *c)
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
    ledger_reserve(&c->key, copy, c->gen);
    c->latest_reserved = true;
}

static void unreserve_latest(struct conn *c)
{
    if (c->latest_reserved && c->latest.sess != NULL)
        ledger_unreserve(&ossl_ops, c->latest.sess);
    c->latest_reserved = false;
}

void conn_drop_latest(struct conn *c)
{
    unreserve_latest(c);
    pooled_free(&c->latest);
}

/* Every session the connection keeps came through conn_session, which
 * needs a key: publishing is handing it to the pool. */
static void publish(struct conn *c, struct pooled p)
{
    if (p.app)
        ledger_reserve(&c->key, p, c->gen);
    else
        pool_put(&c->key, p, c->gen);
}

/* The connection is ending, and OpenSSL will not offer its last ticket
 * again: the pool may have it now. */
void conn_settle_latest(struct conn *c)
{
    if (c->latest.sess != NULL && c->done && c->used && c->verified) {
        /* The pool ends its reservation (pool_put) and keeps its encoding. */
        c->latest_reserved = false;
        publish(c, c->latest);
        c->latest = (struct pooled){0};
    }
    conn_drop_latest(c);
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

void conn_publish_held(struct conn *c, SSL *s)
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

void conn_session(SSL *s, SSL_SESSION *sess, bool app_kept)
{
    struct conn *c = conn_get(s);
    /* A session earned after a certificate callback ran may hold the
     * identity it chose, which no key can show. */
    if (c == NULL || !c->started || c->key.len == 0 || c->cert_asked ||
        !R(SSL_SESSION_is_resumable)(sess) || !same_identity(c, s))
        return;
    /* A handshake run inside SSL_read receives its TLS 1.3 tickets in the
     * same call, before conn_after can notice the handshake ended. */
    conn_notice_done(c, s);
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
        conn_reserve_latest(c);
        if (prev.sess == NULL)
            return;
        p = prev;
        /* Published below, the pool ends its reservation itself. */
        if (prev_reserved && !(c->used && c->verified))
            ledger_unreserve(&ossl_ops, p.sess);
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
    struct conn *c = conn_get(s);
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
        ledger_took(&c->key, &ossl_ops, sess);
        return;
    }
    if (c->latest.sess != NULL && session_same_ticket(c->latest.sess, sess))
        conn_drop_latest(c);
    for (unsigned i = 0; i < c->n_held;) {
        if (session_same_ticket(c->held[i].sess, sess)) {
            pooled_free(&c->held[i]);
            memmove(&c->held[i], &c->held[i + 1], (c->n_held - i - 1) * sizeof *c->held);
            c->n_held--;
        } else {
            i++;
        }
    }
    ledger_disown(&c->key, &ossl_ops, sess);
}
