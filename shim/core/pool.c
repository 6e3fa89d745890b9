/* The per-server pools (pool.h): one uthash table keyed by key bytes,
 * behind one mutex held only for table work. Sessions are freed after the
 * mutex is released, because freeing one runs the application's callbacks
 * (OpenSSL's ex_data), and no application code may run under our lock.
 * The ledger's marks (ledger.c) share the mutex, which is the only lock
 * either takes: a ticket enters or leaves a pool in the same step as the
 * ledger says whose it is. Its place in the lock order: after the
 * store's (a file's; store_take asks the ledger under it), so the store
 * is never called under this mutex.
 *
 * OpenSSL also marks a resumed TLS 1.3 session not resumable at the end of
 * the handshake: a ticket is never offered twice.
 *
 * With a store, the pools still serve their own process first: the store is
 * asked only by a connection that finds nothing here, and hears of the
 * sessions this process will not use itself: those beyond a pool, in
 * batches, and at exit all that are left. A TLS 1.3 ticket is therefore
 * either in one process's memory or in the store, never both. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#include "fork.h"
#include "ledger.h"
#include "log.h"
#include "pool.h"
#include "pooled.h"
#include "store.h"

/* A session and, with a store, its encoded form, made when it entered the
 * pool: the exit flush may run after OpenSSL's own cleanup, and writes it
 * without an OpenSSL call. */
struct slot {
    struct pooled p;
    struct stored *st;      /* NULL: no store, or it is there already */
    bool shared;            /* a TLS 1.3 ticket the store has too (pool_put) */
    uint64_t digest;        /* a TLS 1.3 ticket's (ticket_digest) */
};

struct server {
    UT_hash_handle hh;
    struct slot t12;        /* .p.sess NULL when none */
    unsigned n13;           /* tickets in t13, newest first */
    unsigned slots;         /* t13's length, grown as tickets need it */
    unsigned cap;           /* tickets kept at most (pool_grow) */
    bool gave13;            /* a TLS 1.3 ticket came from it */
    struct slot *t13;
    bool written;           /* a session of it went to the store at once */
    unsigned refusals;      /* offers refused in a row */
    unsigned skip;          /* connections left to go without an offer */
    size_t keylen;
    unsigned char key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct server *servers;   /* in least-recently-used-first order */
static unsigned refusing;        /* servers whose last offer was refused */
/* After the exit flush the store hears nothing more from this process: a
 * connection freed later still (by an exit handler registered after ours)
 * would publish a ticket the flush already wrote. */
static bool flushed;
static unsigned generation;
static int pool_size = 8;
static long max_hosts = 1024;

/* Sessions to free once the lock is released. A pool operation drops at
 * most a server's worth plus one, so a small fixed array suffices; a
 * larger drop spills into the graveyard. Only n is set when one is made:
 * zeroing the array cost 2,000 instructions a pool operation. */
struct dropped {
    unsigned n;
    struct pooled p[2 * POOL_MAX + 2];
};

/* Sessions that the child of a fork must not offer: the parent holds the
 * same tickets. They are freed on the next pool call, not in the atfork
 * handler, where OpenSSL's own locks may be held by a vanished thread. */
static struct pooled *graveyard;
static size_t graveyard_n;

/* Sessions on their way to the store, oldest first: written once there are
 * a pool's worth, so that a server that hands out more tickets than a
 * connection uses costs one store operation per pool, not per connection. */
#define OUTBOX POOL_MAX
static struct stored *outbox[OUTBOX];
static unsigned n_outbox;

static void bury(struct pooled p)
{
    struct pooled *g = realloc(graveyard, (graveyard_n + 1) * sizeof *g);
    if (g == NULL)
        return; /* leaked rather than freed under the lock */
    graveyard = g;
    graveyard[graveyard_n++] = p;
}

static void let_go(struct dropped *d, struct pooled p)
{
    if (d->n < sizeof d->p / sizeof *d->p)
        d->p[d->n++] = p;
    else
        bury(p);
}

static void drop(struct dropped *d, struct slot s, enum counter why)
{
    stat_add(why);
    free(s.st);
    let_go(d, s.p);
}

/* Under the lock: a session this process will not use goes to the store,
 * when there is one and room on the way. */
static void send_off(struct dropped *d, struct slot s)
{
    if (s.st != NULL && !flushed && n_outbox < OUTBOX) {
        outbox[n_outbox++] = s.st;
        let_go(d, s.p);
    } else {
        drop(d, s, ST_EVICTED);
    }
}

static void unlock_and_free(struct dropped *d)
{
    struct pooled *g = graveyard;
    size_t gn = graveyard_n;
    graveyard = NULL;
    graveyard_n = 0;
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; i < d->n; i++)
        pooled_free(&d->p[i]);
    for (size_t i = 0; i < gn; i++)
        pooled_free(&g[i]);
    free(g);
}

static bool usable(const struct pooled *p, time_t now)
{
    return now < p->expires && p->ops->resumable(p->sess);
}

static void remove_t13(struct server *sv, unsigned i)
{
    memmove(&sv->t13[i], &sv->t13[i + 1], (sv->n13 - i - 1) * sizeof *sv->t13);
    sv->n13--;
}

/* A server out of the table: its sessions go, the store's copies to the
 * store. */
static void discard(struct server *sv, struct dropped *d)
{
    for (unsigned i = sv->n13; i-- > 0;)
        send_off(d, sv->t13[i]);
    if (sv->t12.p.sess != NULL)
        send_off(d, sv->t12);
    if (sv->refusals > 0)
        __atomic_fetch_sub(&refusing, 1, __ATOMIC_RELAXED);
    free(sv->t13);
    free(sv);
}

static void drop_server(struct server *sv, struct dropped *d)
{
    HASH_DELETE(hh, servers, sv);
    discard(sv, d);
}

/* Keys run to hundreds of bytes: a key is hashed once when it is built,
 * and moving a server to the tail (which keeps the table in LRU order)
 * reuses that hash. An addition the table has no memory for leaves the
 * server out of it (uthash.h: hh.tbl NULL); such a server is dropped. */
static struct server *find(const struct key *k, unsigned *hv, struct dropped *d)
{
    struct server *sv;
    *hv = k->hash;
    HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, *hv, sv);
    if (sv != NULL) {
        HASH_DELETE(hh, servers, sv);
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, servers, sv->key, sv->keylen, *hv, sv);
        if (sv->hh.tbl == NULL) {
            discard(sv, d);
            return NULL;
        }
    }
    return sv;
}

static struct server *create(const struct key *k, unsigned hv, struct dropped *d)
{
    if (HASH_COUNT(servers) >= (unsigned long)max_hosts)
        drop_server(servers, d);
    struct server *sv = calloc(1, sizeof *sv + k->len);
    if (sv == NULL)
        return NULL;
    sv->slots = 2;
    sv->cap = (unsigned)pool_size;
    sv->t13 = calloc(sv->slots, sizeof *sv->t13);
    if (sv->t13 == NULL) {
        free(sv);
        return NULL;
    }
    sv->keylen = k->len;
    memcpy(sv->key, k->bytes, k->len);
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, servers, sv->key, sv->keylen, hv, sv);
    if (sv->hh.tbl == NULL) {
        free(sv->t13);
        free(sv);
        return NULL;
    }
    return sv;
}

/* Under the lock: sv's TLS 1.2 session, when it has none. */
static void keep_t12(struct server *sv, const struct pooled *p)
{
    if (sv->t12.p.sess != NULL || !p->ops->up_ref(p->sess))
        return;
    sv->t12 = (struct slot){*p, NULL, false, 0};
    sv->t12.p.chain = chain_copy(&p->chain);
}

/* A TLS 1.2 session kept in the pool is offered as a copy of its own, so
 * that its fate (OpenSSL marks a session not resumable when a connection
 * is freed without shutdown) is not the pool's. */
static void private_copy(struct pooled *kept, struct pooled *out)
{
    *out = *kept;
    out->sess = kept->ops->dup(kept->sess);
    kept->ops->free(kept->sess);
    if (out->sess == NULL)
        chain_free(&out->chain);
}

/* A single-use pool serves as many handshakes at once as it holds
 * tickets, and a connection that finds none of a server that gives them
 * shows the program has more open to it than the pool keeps: the server's
 * capacity grows by one, up to POOL_MAX, so that the tickets the burst
 * brings back are kept for the next one. Only the count grows here; the
 * slots follow when tickets fill them (more_slots). A program that
 * connects one at a time never finds the pool empty while the server
 * gives a ticket with each connection, and keeps RESUMESHIM_POOL_SIZE. */
static void pool_grow(struct server *sv)
{
    if (sv->gave13 && sv->n13 == 0 && sv->t12.p.sess == NULL && sv->cap < POOL_MAX)
        sv->cap++;
}

/* Under the lock: room for one more ticket, when the capacity allows. */
static bool more_slots(struct server *sv)
{
    if (sv->n13 >= sv->cap)
        return false;
    if (sv->n13 < sv->slots)
        return true;
    unsigned n = 2 * sv->slots < sv->cap ? 2 * sv->slots : sv->cap;
    struct slot *t = realloc(sv->t13, n * sizeof *t);
    if (t == NULL)
        return false;
    sv->t13 = t;
    sv->slots = n;
    return true;
}

void pool_take(const struct key *k, time_t now, struct pooled *out)
{
    struct dropped d;
    d.n = 0;
    *out = (struct pooled){0};
    pthread_mutex_lock(&lock);
    unsigned hv;
    struct server *sv = find(k, &hv, &d);
    if (sv != NULL && sv->skip > 0) {
        sv->skip--;
        unlock_and_free(&d);
        return;
    }
    if (sv != NULL && !flushed)
        pool_grow(sv);
    /* After the exit flush, the tickets still here are in the store too. */
    bool shared = false;
    uint64_t digest = 0;
    while (sv != NULL && sv->n13 > 0 && !flushed) {
        struct slot s = sv->t13[0];
        remove_t13(sv, 0);
        if (usable(&s.p, now)) {
            *out = s.p;
            free(s.st);
            shared = s.shared;
            digest = s.digest;
            ledger_offered_locked(digest);
            break;
        }
        drop(&d, s, ST_EXPIRED);
    }
    struct pooled t12 = {0};
    if (sv != NULL && out->sess == NULL && sv->t12.p.sess != NULL) {
        if (usable(&sv->t12.p, now) && sv->t12.p.ops->up_ref(sv->t12.p.sess)) {
            t12 = sv->t12.p;
            t12.chain = chain_copy(&sv->t12.p.chain);
        } else {
            drop(&d, sv->t12, ST_EXPIRED);
            sv->t12 = (struct slot){0};
        }
    }
    unlock_and_free(&d);
    if (t12.sess != NULL) {
        private_copy(&t12, out);
        return;
    }
    /* The store's copy of a ticket shared with it is spent first: another
     * process may have taken it. */
    if (shared && !ledger_spend_shared(digest, now))
        pooled_free(out);
    if (out->sess != NULL || !store_on())
        return;
    ledger_from_store(k, now, &t12);
    if (t12.sess == NULL || t12.ops->is_tls13(t12.sess)) {
        *out = t12;
        return;
    }
    /* A TLS 1.2 session also stays in the store: a copy here serves this
     * process's next connections without asking the store again. */
    pthread_mutex_lock(&lock);
    sv = find(k, &hv, &d);
    if (sv == NULL)
        sv = create(k, hv, &d);
    if (sv != NULL)
        keep_t12(sv, &t12);
    unlock_and_free(&d);
    private_copy(&t12, out);
}

void pool_return(const struct key *k, struct pooled p, unsigned gen)
{
    if (p.sess != NULL && p.ops->is_tls13(p.sess))
        pool_put(k, p, gen);
    else
        pooled_free(&p);
}

/* Some servers hand out tickets they never accept (nginx with its own
 * tickets and cache off still sends TLS 1.3 ones): each offer then costs
 * the client a binder and a wasted key schedule. After a few refusals in a
 * row, offers pause for a while, longer each time, and one offer probes. A
 * server that restarts with new keys refuses the old tickets once: the
 * full handshake brings new ones, offered first (newest first). */
void pool_verdict(const struct key *k, bool resumed)
{
    /* The common case, a resumption while no server refuses, takes no lock. */
    if (resumed && __atomic_load_n(&refusing, __ATOMIC_RELAXED) == 0)
        return;
    struct dropped d;
    d.n = 0;
    pthread_mutex_lock(&lock);
    unsigned hv;
    struct server *sv = find(k, &hv, &d);
    if (sv == NULL && !resumed)
        sv = create(k, hv, &d);
    if (sv != NULL && resumed) {
        if (sv->refusals > 0)
            __atomic_fetch_sub(&refusing, 1, __ATOMIC_RELAXED);
        sv->refusals = 0;
    } else if (sv != NULL) {
        if (sv->refusals++ == 0)
            __atomic_fetch_add(&refusing, 1, __ATOMIC_RELAXED);
        if (sv->refusals >= 3)
            sv->skip = 1u << (sv->refusals < 8 ? sv->refusals - 2 : 6);
    }
    unlock_and_free(&d);
}

/* Writes a batch of the outbox, outside the lock. */
static void write_out(struct stored **batch, unsigned n)
{
    if (n == 0)
        return;
    store_write(batch, n);
    for (unsigned i = 0; i < n; i++)
        free(batch[i]);
}

/* Under the lock: the outbox's batch, once it holds a pool's worth. */
static unsigned take_batch(struct stored **batch)
{
    unsigned n = n_outbox >= (unsigned)pool_size ? n_outbox : 0;
    memcpy(batch, outbox, n * sizeof *batch);
    n_outbox -= n;
    return n;
}

void pool_put(const struct key *k, struct pooled p, unsigned gen)
{
    struct dropped d;
    d.n = 0;
    bool tls13 = p.ops->is_tls13(p.sess);
    uint64_t digest = tls13 ? p.ops->ticket_digest(p.sess) : 0;
    struct slot s = {p, NULL, false, digest};
    struct stored *batch[OUTBOX];
    pthread_mutex_lock(&lock);
    /* A ticket reserved for the store (ledger_reserve) comes here when its
     * connection ends: the reservation is over, and its encoding is what
     * the store would need. */
    if (tls13)
        s.st = ledger_end_locked(digest);
    if (s.st == NULL && store_on() && !flushed) {
        pthread_mutex_unlock(&lock);
        s.st = store_encode(k, &p);
        pthread_mutex_lock(&lock);
    }
    if (flushed) {
        free(s.st);
        s.st = NULL;
    }
    /* One the program serialized is its own in this process, and the
     * store's at exit (ledger_serialized). */
    if (tls13 && s.st != NULL && gen == generation && ledger_hold_locked(digest, s.st))
        s.st = NULL;
    bool wanted = gen == generation && !(tls13 && ledger_programs_locked(digest));
    unsigned hv = 0;
    struct server *sv = wanted ? find(k, &hv, &d) : NULL;
    if (wanted && sv == NULL)
        sv = create(k, hv, &d);
    /* The first session of each server goes to the store at once (see
     * pool_write_through), and stays here too: a TLS 1.3 ticket so shared
     * is spent in the store before it is offered from here (pool_take), as
     * the store spends what it hands out, so only one of them offers it. */
    struct stored *now = NULL;
    if (sv != NULL && s.st != NULL && !sv->written) {
        sv->written = true;
        now = s.st;
        s.st = NULL;
    }
    s.shared = now != NULL && tls13;
    if (sv == NULL) {
        drop(&d, s, ST_EVICTED);
    } else if (tls13) {
        sv->gave13 = true;
        if (!more_slots(sv))
            send_off(&d, sv->t13[--sv->n13]);
        memmove(&sv->t13[1], &sv->t13[0], sv->n13 * sizeof *sv->t13);
        sv->t13[0] = s;
        sv->n13++;
        stat_add(ST_TICKETS);
    } else {
        if (sv->t12.p.sess != NULL)
            drop(&d, sv->t12, ST_EVICTED);
        sv->t12 = s;
        stat_add(ST_TICKETS);
    }
    unsigned n = take_batch(batch);
    unlock_and_free(&d);
    write_out(&now, now != NULL);
    write_out(batch, n);
}

bool pool_write_through(const struct key *k, const struct pooled *p, unsigned gen)
{
    if (!store_on())
        return false;
    struct dropped d;
    d.n = 0;
    unsigned hv;
    pthread_mutex_lock(&lock);
    bool mine = gen == generation && !flushed &&
                !(p->ops->is_tls13(p->sess) &&
                  ledger_programs_locked(p->ops->ticket_digest(p->sess)));
    struct server *sv = mine ? find(k, &hv, &d) : NULL;
    if (sv == NULL && mine)
        sv = create(k, hv, &d);
    bool first = sv != NULL && !sv->written;
    if (first)
        sv->written = true;
    unlock_and_free(&d);
    struct stored *st = first ? store_encode(k, p) : NULL;
    if (st == NULL)
        return false;
    stat_add(ST_TICKETS);
    write_out(&st, 1);
    return true;
}

/* Under the lock, the ledger's (pool_evict_locked): sessions it drops,
 * freed once it releases the lock. */
static struct dropped evicted;

void pool_lock(void)
{
    pthread_mutex_lock(&lock);
}

void pool_unlock(bool free_dropped)
{
    if (!free_dropped) {
        pthread_mutex_unlock(&lock);
        return;
    }
    struct dropped d;
    d.n = evicted.n;
    memcpy(d.p, evicted.p, d.n * sizeof *d.p);
    evicted.n = 0;
    unlock_and_free(&d);
}

/* The ticket leaves a server's pool; with hold (the program serialized
 * it), the encoding of a copy the store has not yet is reserved for the
 * store at exit. */
static void evict_from(struct server *sv, const struct tls_ops *ops, const void *sess,
                       uint64_t digest, bool hold)
{
    for (unsigned i = 0; i < sv->n13;) {
        struct slot s = sv->t13[i];
        if (s.p.ops != ops || !ops->same_ticket(s.p.sess, sess)) {
            i++;
            continue;
        }
        /* One shared with the store (written through) is there already. */
        if (hold && s.st != NULL && !s.shared && !flushed) {
            ledger_reserve_locked(digest, s.st);
            s.st = NULL;
        }
        drop(&evicted, s, ST_EVICTED);
        remove_t13(sv, i);
    }
}

void pool_evict_locked(const struct key *k, const struct tls_ops *ops, const void *sess,
                       uint64_t digest, bool hold)
{
    struct server *sv, *tmp;
    if (k != NULL) {
        HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, k->hash, sv);
        if (sv != NULL)
            evict_from(sv, ops, sess, digest, hold);
    } else {
        HASH_ITER(hh, servers, sv, tmp) evict_from(sv, ops, sess, digest, hold);
    }
}

void pool_forget(const struct key *k)
{
    struct dropped d;
    d.n = 0;
    struct server *sv;
    pthread_mutex_lock(&lock);
    HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, k->hash, sv);
    if (sv != NULL) {
        for (unsigned i = 0; i < sv->n13; i++)
            drop(&d, sv->t13[i], ST_EVICTED);
        sv->n13 = 0;
        if (sv->t12.p.sess != NULL)
            drop(&d, sv->t12, ST_EVICTED);
        sv->t12 = (struct slot){0};
    }
    unlock_and_free(&d);
}

void pool_refuse(const struct key *k)
{
    pool_forget(k);
    store_forget(k);
}

unsigned pool_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_RELAXED);
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

/* A connection open across the fork is the child's as much as the
 * parent's: the child may take its session, offer it, or go on with the
 * connection and read the tickets that follow. Neither process can know
 * what the other does, so in both its generation is stale from now on,
 * and what it brings stays the program's. */
static void atfork_parent(void)
{
    /* Atomic: other threads read it without the lock (pool_generation). */
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

/* The child keeps TLS 1.2 sessions (reusable by design) and gives up every
 * TLS 1.3 ticket, which its parent may offer too. Connections the child
 * inherited publish nothing: their generation is stale (atfork_parent). */
static void atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    generation++;
    struct server *sv, *tmp;
    HASH_ITER(hh, servers, sv, tmp) {
        for (unsigned i = 0; i < sv->n13; i++) {
            free(sv->t13[i].st);
            bury(sv->t13[i].p);
        }
        sv->n13 = 0;
        sv->written = false;
    }
    /* Reserved tickets and the outbox are the parent's to publish. */
    ledger_forked_locked();
    for (unsigned i = 0; i < n_outbox; i++)
        free(outbox[i]);
    n_outbox = 0;
}

/* Everything left for the store, oldest first: the tickets the application
 * kept, the outbox, then each pool, least recently used first. */
void pool_flush(void)
{
    pthread_mutex_lock(&lock);
    size_t n = 0, max = ledger_count_locked() + n_outbox;
    struct server *sv, *tmp;
    HASH_ITER(hh, servers, sv, tmp) max += sv->n13 + 1;
    struct stored **list = malloc(max * sizeof *list);
    unsigned kept = ledger_drain_locked(list);
    n = list != NULL ? kept : 0;
    for (unsigned i = 0; i < n_outbox; i++)
        if (list != NULL)
            list[n++] = outbox[i];
        else
            free(outbox[i]);
    n_outbox = 0;
    HASH_ITER(hh, servers, sv, tmp) {
        for (unsigned i = sv->n13; i-- > 0;) {
            if (list != NULL && sv->t13[i].st != NULL)
                list[n++] = sv->t13[i].st;
            else
                free(sv->t13[i].st);
            sv->t13[i].st = NULL;
        }
        if (list != NULL && sv->t12.st != NULL)
            list[n++] = sv->t12.st;
        else
            free(sv->t12.st);
        sv->t12.st = NULL;
    }
    flushed = true;
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; list != NULL && i < kept; i++)
        stat_add(ST_TICKETS);
    if (list != NULL)
        write_out(list, (unsigned)n);
    free(list);
}

void pool_init(const struct config *cfg)
{
    pool_size = cfg->pool_size;
    max_hosts = cfg->max_hosts;
    fork_register(atfork_prepare, atfork_parent, atfork_child);
}
