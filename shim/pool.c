/* The per-server pools: one uthash table keyed by key bytes, behind one
 * mutex held only for table work. Sessions are freed after the mutex is
 * released, because SSL_SESSION_free runs the application's ex_data
 * callbacks, and no application code may run under our lock.
 *
 * TLS 1.3 tickets are single use (RFC 8446 C.4; OpenSSL also marks a resumed
 * session not resumable at the end of the handshake), so an offer takes one
 * out and concurrent handshakes to one server each get their own. A TLS 1.2
 * session may be resumed many times; one is kept per server and each offer
 * gets a copy. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "shim.h"

struct server {
    UT_hash_handle hh;
    struct pooled t12;      /* .sess NULL when none */
    unsigned n13;           /* tickets in t13, newest first */
    struct pooled *t13;     /* cfg.pool_size slots */
    unsigned refusals;      /* offers refused in a row */
    unsigned skip;          /* connections left to go without an offer */
    size_t keylen;
    unsigned char key[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* TLS 1.3 tickets the application offers or keeps itself, as digests in a
 * small ring: they never enter a pool, not even later from a connection
 * that still holds one as its newest ticket. */
#define DISOWNED 256
static uint64_t disowned[DISOWNED];
static unsigned disowned_next;
static struct server *servers;   /* in least-recently-used-first order */
static unsigned refusing;        /* servers whose last offer was refused */
/* After the exit flush the store hears nothing more from this process: a
 * connection freed later still (by an exit handler registered after ours)
 * would publish a ticket the flush already wrote. */
static bool flushed;
static unsigned generation;

/* Sessions to free once the lock is released. A pool operation drops at
 * most a server's worth plus one, so a small fixed array suffices; a
 * larger drop spills into the graveyard. */
struct dropped {
    unsigned n;
    struct pooled p[2 * 64 + 2];
};

/* Sessions that the child of a fork must not offer: the parent holds the
 * same tickets. They are freed on the next pool call, not in the atfork
 * handler, where OpenSSL's own locks may be held by a vanished thread. */
static struct pooled *graveyard;
static size_t graveyard_n;

/* Tickets the application keeps (pool_reserve), encoded for the store,
 * oldest first. */
#define RESERVED 64
static struct reserved {
    uint64_t digest;
    struct stored *st;
} reserved[RESERVED];
static unsigned n_reserved;

static void bury(struct pooled p)
{
    struct pooled *g = realloc(graveyard, (graveyard_n + 1) * sizeof *g);
    if (g == NULL)
        return; /* leaked rather than freed under the lock */
    graveyard = g;
    graveyard[graveyard_n++] = p;
}

static void drop(struct dropped *d, struct pooled p, enum counter why)
{
    stat_add(why);
    if (d->n < sizeof d->p / sizeof *d->p)
        d->p[d->n++] = p;
    else
        bury(p);
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

static uint64_t ticket_digest(const SSL_SESSION *sess)
{
    const unsigned char *t;
    size_t len;
    R(SSL_SESSION_get0_ticket)(sess, &t, &len);
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ t[i]) * 0x100000001b3u;
    return h;
}

static bool is_disowned(uint64_t d)
{
    for (unsigned i = 0; i < DISOWNED; i++)
        if (disowned[i] == d)
            return true;
    return false;
}

/* Under the lock. */
static void disown(uint64_t digest)
{
    if (!is_disowned(digest))
        disowned[disowned_next++ % DISOWNED] = digest;
}

/* Under the lock; the others keep their order (oldest first). */
static void unreserve(uint64_t digest)
{
    for (unsigned i = 0; i < n_reserved;) {
        if (reserved[i].digest == digest) {
            free(reserved[i].st);
            memmove(&reserved[i], &reserved[i + 1], (n_reserved - i - 1) * sizeof *reserved);
            n_reserved--;
        } else {
            i++;
        }
    }
}

static bool usable(const struct pooled *p, time_t now)
{
    return now < p->expires && R(SSL_SESSION_is_resumable)(p->sess);
}

static void remove_t13(struct server *sv, unsigned i)
{
    memmove(&sv->t13[i], &sv->t13[i + 1], (sv->n13 - i - 1) * sizeof *sv->t13);
    sv->n13--;
}

static void drop_server(struct server *sv, struct dropped *d)
{
    for (unsigned i = 0; i < sv->n13; i++)
        drop(d, sv->t13[i], ST_EVICTED);
    if (sv->t12.sess != NULL)
        drop(d, sv->t12, ST_EVICTED);
    if (sv->refusals > 0)
        __atomic_fetch_sub(&refusing, 1, __ATOMIC_RELAXED);
    HASH_DELETE(hh, servers, sv);
    free(sv->t13);
    free(sv);
}

unsigned pool_key_hash(const unsigned char *bytes, size_t len)
{
    unsigned hv;
    HASH_VALUE(bytes, len, hv);
    return hv;
}

/* Keys run to hundreds of bytes: a key is hashed once when it is built,
 * and moving a server to the tail (which keeps the table in LRU order)
 * reuses that hash. */
static struct server *find(const struct key *k, unsigned *hv)
{
    struct server *sv;
    *hv = k->hash;
    HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, *hv, sv);
    if (sv != NULL) {
        HASH_DELETE(hh, servers, sv);
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, servers, sv->key, sv->keylen, *hv, sv);
    }
    return sv;
}

static struct server *create(const struct key *k, unsigned hv, struct dropped *d)
{
    if (HASH_COUNT(servers) >= (unsigned long)cfg.max_hosts)
        drop_server(servers, d);
    struct server *sv = calloc(1, sizeof *sv + k->len);
    if (sv == NULL)
        return NULL;
    sv->t13 = calloc((size_t)cfg.pool_size, sizeof *sv->t13);
    if (sv->t13 == NULL) {
        free(sv);
        return NULL;
    }
    sv->keylen = k->len;
    memcpy(sv->key, k->bytes, k->len);
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, servers, sv->key, sv->keylen, hv, sv);
    return sv;
}

void pool_take(const struct key *k, time_t now, struct pooled *out)
{
    struct dropped d = {0};
    out->sess = NULL;
    pthread_mutex_lock(&lock);
    unsigned hv;
    struct server *sv = find(k, &hv);
    if (sv != NULL && sv->skip > 0) {
        sv->skip--;
        unlock_and_free(&d);
        return;
    }
    while (sv != NULL && sv->n13 > 0) {
        struct pooled p = sv->t13[0];
        remove_t13(sv, 0);
        if (usable(&p, now)) {
            *out = p;
            break;
        }
        drop(&d, p, ST_EXPIRED);
    }
    if (sv != NULL && out->sess == NULL && sv->t12.sess != NULL) {
        if (usable(&sv->t12, now)) {
            *out = sv->t12;
            R(SSL_SESSION_up_ref)(out->sess);
            out->chain = chain_copy(&sv->t12.chain);
        } else {
            drop(&d, sv->t12, ST_EXPIRED);
            sv->t12 = (struct pooled){0};
        }
    }
    unlock_and_free(&d);
    /* The store is asked only when this process has nothing of its own:
     * what it holds in memory is what the store could not take. */
    if (out->sess == NULL && store_on())
        store_take(k, now, out);
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
    struct dropped d = {0};
    pthread_mutex_lock(&lock);
    unsigned hv;
    struct server *sv = find(k, &hv);
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

void pool_put(const struct key *k, struct pooled p, unsigned gen)
{
    struct dropped d = {0};
    pthread_mutex_lock(&lock);
    bool tls13 = session_is_tls13(p.sess);
    uint64_t digest = tls13 ? ticket_digest(p.sess) : 0;
    bool wanted = gen == generation && !(tls13 && is_disowned(digest));
    if (wanted && store_on() && !flushed) {
        pthread_mutex_unlock(&lock);
        if (store_put(k, &p)) {
            stat_add(ST_TICKETS);
            pooled_free(&p);
            return;
        }
        /* The application may have offered or saved it meanwhile. */
        pthread_mutex_lock(&lock);
        wanted = gen == generation && !(tls13 && is_disowned(digest));
    }
    unsigned hv = 0;
    struct server *sv = wanted ? find(k, &hv) : NULL;
    if (wanted && sv == NULL)
        sv = create(k, hv, &d);
    if (sv == NULL) {
        drop(&d, p, ST_EVICTED);
    } else if (tls13) {
        if (sv->n13 == (unsigned)cfg.pool_size)
            drop(&d, sv->t13[--sv->n13], ST_EVICTED);
        memmove(&sv->t13[1], &sv->t13[0], sv->n13 * sizeof *sv->t13);
        sv->t13[0] = p;
        sv->n13++;
        stat_add(ST_TICKETS);
    } else {
        if (sv->t12.sess != NULL)
            drop(&d, sv->t12, ST_EVICTED);
        sv->t12 = p;
        stat_add(ST_TICKETS);
    }
    unlock_and_free(&d);
}

static void discard_from(struct server *sv, const SSL_SESSION *sess, struct dropped *d)
{
    for (unsigned i = 0; i < sv->n13;) {
        if (session_same_ticket(sv->t13[i].sess, sess)) {
            drop(d, sv->t13[i], ST_EVICTED);
            remove_t13(sv, i);
        } else {
            i++;
        }
    }
}

static void discard(const struct key *k, const SSL_SESSION *sess, bool keep_reserved)
{
    struct dropped d = {0};
    uint64_t digest = ticket_digest(sess);
    pthread_mutex_lock(&lock);
    disown(digest);
    if (!keep_reserved)
        unreserve(digest);
    struct server *sv, *tmp;
    if (k != NULL) {
        HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, k->hash, sv);
        if (sv != NULL)
            discard_from(sv, sess, &d);
    } else {
        HASH_ITER(hh, servers, sv, tmp) discard_from(sv, sess, &d);
    }
    unlock_and_free(&d);
}

void pool_discard(const struct key *k, const SSL_SESSION *sess)
{
    discard(k, sess, false);
}

void pool_took(const struct key *k, const SSL_SESSION *sess)
{
    discard(k, sess, true);
}

void pool_forget(const struct key *k)
{
    struct dropped d = {0};
    struct server *sv;
    pthread_mutex_lock(&lock);
    HASH_FIND_BYHASHVALUE(hh, servers, k->bytes, k->len, k->hash, sv);
    if (sv != NULL) {
        for (unsigned i = 0; i < sv->n13; i++)
            drop(&d, sv->t13[i], ST_EVICTED);
        sv->n13 = 0;
        if (sv->t12.sess != NULL)
            drop(&d, sv->t12, ST_EVICTED);
        sv->t12 = (struct pooled){0};
    }
    unlock_and_free(&d);
}

unsigned pool_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_RELAXED);
}

void pool_atfork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void pool_atfork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child keeps TLS 1.2 sessions (reusable by design) and gives up every
 * TLS 1.3 ticket, which its parent may offer too. Connections the child
 * inherited publish nothing: their generation is now stale. */
void pool_atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    generation++;
    struct server *sv, *tmp;
    HASH_ITER(hh, servers, sv, tmp) {
        for (unsigned i = 0; i < sv->n13; i++)
            bury(sv->t13[i]);
        sv->n13 = 0;
    }
    /* Reserved tickets are the parent's to publish. */
    for (unsigned i = 0; i < n_reserved; i++)
        free(reserved[i].st);
    n_reserved = 0;
}

void pool_reserve(const struct key *k, struct pooled p, unsigned gen)
{
    struct stored *st =
        store_on() && !__atomic_load_n(&flushed, __ATOMIC_RELAXED) ? store_encode(k, &p) : NULL;
    uint64_t digest = ticket_digest(p.sess);
    pooled_free(&p);
    if (st == NULL)
        return;
    pthread_mutex_lock(&lock);
    if (gen != generation || is_disowned(digest) || flushed) {
        pthread_mutex_unlock(&lock);
        free(st);
        return;
    }
    if (n_reserved == RESERVED) {
        free(reserved[0].st);
        memmove(&reserved[0], &reserved[1], (RESERVED - 1) * sizeof *reserved);
        n_reserved--;
    }
    reserved[n_reserved++] = (struct reserved){digest, st};
    pthread_mutex_unlock(&lock);
}

void pool_unreserve(const SSL_SESSION *sess)
{
    uint64_t digest = ticket_digest(sess);
    pthread_mutex_lock(&lock);
    unreserve(digest);
    pthread_mutex_unlock(&lock);
}

void pool_flush(void)
{
    struct stored *st[RESERVED];
    pthread_mutex_lock(&lock);
    unsigned n = n_reserved;
    for (unsigned i = 0; i < n; i++) {
        st[i] = reserved[i].st;
        disown(reserved[i].digest);
    }
    n_reserved = 0;
    flushed = true;
    pthread_mutex_unlock(&lock);
    store_write(st, n);
    for (unsigned i = 0; i < n; i++) {
        stat_add(ST_TICKETS);
        free(st[i]);
    }
}
