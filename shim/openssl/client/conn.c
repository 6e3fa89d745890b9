/* A client connection's life (conn.h): its state made as the handshake
 * begins, followed through the handshake and the program's first use, and
 * settled when the program shuts the connection down, clears or frees it.
 * What it offers is connoffer.c's, what the handshake's end decides
 * conndone.c's, what it keeps of the sessions it earns connkeep.c's. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "appsess.h"
#include "connstate.h"
#include "ctx.h"
#include "exdata.h"
#include "log.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"
#include "settings.h"
#include "store.h"
#include "tcp.h"
#include "verdict.h"

int conn_index = -1;
_Thread_local const SSL *conn_quiet;
_Thread_local unsigned long conn_quiet_epoch;
unsigned long conn_epoch;

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
    conn_drop_latest(c);
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
    conn_set_verified_chain(c, NULL);
}

static void free_conn(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                      void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    if (ptr != NULL) {
        not_quiet();
        conn_settle_latest(ptr);
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
    conn_keep_init(cfg);
    atomic_only(&conn_epoch, sizeof conn_epoch);
    /* SSL_dup copies ex_data pointers; the copy must not share our state. */
    conn_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, exdata_dup_none,
                                            free_conn);
}

static struct conn *get_or_create(SSL *s)
{
    struct conn *c = conn_get(s);
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
 * pools (ledger_claim). */
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
    conn_offer(c, s, ctx);
}

bool conn_after(SSL *s, int ret, enum io io)
{
    struct conn *c = conn_get(s);
    if (c == NULL || !c->started)
        return false;
    bool was_done = c->done, was_refused = c->refused;
    conn_notice_done(c, s);
    if (c->pending && was_done && ret > 0 && io == IO_HANDSHAKE)
        conn_judge(c, s);
    if (c->pending)
        return ret > 0;
    /* The refused call fails; so does every later handshake call, as on a
     * connection whose handshake failed (reads and writes find it shut). */
    if (was_refused && ret > 0 && io == IO_HANDSHAKE)
        conn_push_refusal(c);
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
            conn_publish_held(c, s);
        if (c->shut)
            conn_settle_latest(c);
        else
            conn_reserve_latest(c);
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
 * the handshake starts (ledger_claim), unless another connection offered it
 * in between: then it offers none of its own (the shim may offer it
 * another), and no ticket is offered twice. */
void conn_shutdown(SSL *s)
{
    struct conn *c = conn_get(s);
    if (c == NULL || !c->started || c->shut || !(R(SSL_get_shutdown)(s) & SSL_SENT_SHUTDOWN))
        return;
    notice_abandoned(c);
    c->shut = true;
    /* One not earned yet waits for the connection's first use, or goes
     * when it is freed. */
    if (c->latest.sess != NULL && c->done && c->used && c->verified) {
        LOG(LOG_DEBUG, "a shut down connection's newest TLS 1.3 ticket goes to the pool");
        conn_settle_latest(c);
    }
}

void conn_cert_asked(SSL *s)
{
    struct conn *c = conn_get(s);
    if (c != NULL)
        c->cert_asked = true;
}

bool conn_clearing(SSL *s)
{
    struct conn *c = conn_get(s);
    /* libssl clears every connection as its first handshake starts */
    return c != NULL && c->started && !R(SSL_in_before)(s);
}

void conn_cleared(SSL *s)
{
    struct conn *c = conn_get(s);
    if (c == NULL)
        return;
    not_quiet();
    /* SSL_clear keeps the session of a cleanly shut down connection, and
     * the next handshake offers it: then the last ticket is the
     * application's, not the pool's. */
    SSL_SESSION *kept = R(SSL_get_session)(s);
    if (kept != NULL && c->latest.sess != NULL && session_same_ticket(kept, c->latest.sess))
        conn_drop_latest(c);
    conn_settle_latest(c);
    release(c);
    reset(c);
}
