/* The ledger (ledger.h): a process's marks and reservations, and the
 * questions the store's spent table answers across processes. The marks
 * live under the pools' lock (pool.h: pool_lock), not a lock of their
 * own: a ticket is marked and leaves the pools in one step, and a pool
 * asks whose a ticket is in the step that lets it in. The store is asked
 * only with that lock released: the store's lock comes first in the
 * order (store_take asks program_holds under it). */
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#include "config.h"
#include "ledger.h"
#include "pool.h"
#include "pooled.h"
#include "store.h"

/* Whose each ticket is, the oldest first (uthash keeps the order they
 * were added): with no room, the oldest goes. The last MARKS_MAX are
 * remembered. */
#define MARKS_MAX 16384
enum kind {
    SPENT,   /* the shim offered it */
    PROGRAM, /* the program offered it, or took it and keeps it */
    HELD,    /* the program serialized it: the store's at exit, unless
                the program offers it meanwhile */
};
struct whose {
    UT_hash_handle hh;
    uint64_t digest;
    enum kind kind;
};
static struct whose *marks;

/* The tickets the program took and keeps, in their encoded form, for the
 * store at exit, oldest first. */
#define RESERVED POOL_MAX
static struct reserved {
    uint64_t digest;
    struct stored *st;
} reserved[RESERVED];
static unsigned n_reserved;
/* After the exit flush nothing is reserved any more: the store has heard
 * the last of this process. */
static bool drained;

static struct whose *mark_of(uint64_t d)
{
    struct whose *m;
    HASH_FIND(hh, marks, &d, sizeof d, m);
    return m;
}

static void add_mark(uint64_t d, enum kind kind)
{
    struct whose *m = marks;
    if (m != NULL && HASH_COUNT(marks) >= MARKS_MAX)
        HASH_DEL(marks, m); /* the oldest; its memory is reused */
    else
        m = malloc(sizeof *m);
    if (m == NULL)
        return;
    *m = (struct whose){.digest = d, .kind = kind};
    HASH_ADD(hh, marks, digest, sizeof m->digest, m);
    if (m->hh.tbl == NULL)
        free(m); /* as a mark with no memory for it */
}

static bool is_spent(uint64_t d)
{
    const struct whose *m = mark_of(d);
    return m != NULL && m->kind == SPENT;
}

static bool is_held(uint64_t d)
{
    const struct whose *m = mark_of(d);
    return m != NULL && m->kind == HELD;
}

/* One the shim offered stays spent: the program offering it again does
 * not make it its own. */
static void disown(uint64_t d)
{
    struct whose *m = mark_of(d);
    if (m == NULL)
        add_mark(d, PROGRAM);
    else if (m->kind == HELD)
        m->kind = PROGRAM;
}

void ledger_offered_locked(uint64_t d)
{
    if (mark_of(d) == NULL)
        add_mark(d, SPENT);
}

bool ledger_programs_locked(uint64_t d)
{
    const struct whose *m = mark_of(d);
    return m != NULL && m->kind != SPENT;
}

void ledger_reserve_locked(uint64_t digest, struct stored *st)
{
    if (n_reserved == RESERVED) {
        free(reserved[0].st);
        memmove(&reserved[0], &reserved[1], (RESERVED - 1) * sizeof *reserved);
        n_reserved--;
    }
    reserved[n_reserved++] = (struct reserved){digest, st};
}

/* The others keep their order (oldest first). */
struct stored *ledger_end_locked(uint64_t digest)
{
    struct stored *st = NULL;
    for (unsigned i = 0; i < n_reserved;) {
        if (reserved[i].digest == digest) {
            free(st);
            st = reserved[i].st;
            memmove(&reserved[i], &reserved[i + 1], (n_reserved - i - 1) * sizeof *reserved);
            n_reserved--;
        } else {
            i++;
        }
    }
    return st;
}

bool ledger_hold_locked(uint64_t digest, struct stored *st)
{
    if (!is_held(digest))
        return false;
    ledger_reserve_locked(digest, st);
    return true;
}

unsigned ledger_count_locked(void)
{
    return n_reserved;
}

unsigned ledger_drain_locked(struct stored **list)
{
    unsigned n = n_reserved;
    for (unsigned i = 0; i < n_reserved; i++) {
        if (list != NULL)
            list[i] = reserved[i].st;
        else
            free(reserved[i].st);
        disown(reserved[i].digest);
    }
    n_reserved = 0;
    __atomic_store_n(&drained, true, __ATOMIC_RELAXED);
    return n;
}

void ledger_forked_locked(void)
{
    for (unsigned i = 0; i < n_reserved; i++)
        free(reserved[i].st);
    n_reserved = 0;
}

/* The program's for good: marked, its reservation ended unless it keeps
 * one (keep_reserved), and gone from the pools, in one step. */
static void disown_step(const struct key *k, const struct tls_ops *ops, const void *sess,
                        bool keep_reserved)
{
    uint64_t digest = ops->ticket_digest(sess);
    pool_lock();
    disown(digest);
    if (!keep_reserved)
        free(ledger_end_locked(digest));
    pool_evict_locked(k, ops, sess, digest, false);
    pool_unlock(true);
}

/* Whether the shim offered the ticket in this process. */
static bool spent_here(uint64_t digest)
{
    pool_lock();
    bool offered = is_spent(digest);
    pool_unlock(false);
    return offered;
}

void ledger_disown(const struct key *k, const struct tls_ops *ops, const void *sess)
{
    disown_step(k, ops, sess, false);
}

bool ledger_claim(const struct key *k, const struct tls_ops *ops, const void *sess)
{
    uint64_t digest = ops->ticket_digest(sess);
    bool offered = spent_here(digest);
    disown_step(k, ops, sess, false);
    if (!offered && store_on())
        offered = store_claim(k, sess, digest, time(NULL));
    return !offered;
}

bool ledger_app_offers(const struct tls_ops *ops, const void *sess)
{
    uint64_t digest = ops->ticket_digest(sess);
    bool offered = spent_here(digest);
    disown_step(NULL, ops, sess, false);
    if (!offered && store_on())
        offered = store_mark(digest, time(NULL), MARK_PROGRAM) == MARK_SHIM;
    return !offered;
}

void ledger_serialized(const struct tls_ops *ops, const void *sess)
{
    uint64_t digest = ops->ticket_digest(sess);
    pool_lock();
    if (mark_of(digest) == NULL) {
        add_mark(digest, HELD);
        pool_evict_locked(NULL, ops, sess, digest, true);
    }
    pool_unlock(true);
}

void ledger_took(const struct key *k, const struct tls_ops *ops, const void *sess)
{
    disown_step(k, ops, sess, true);
}

void ledger_reserve(const struct key *k, struct pooled p, unsigned gen)
{
    struct stored *st = store_on() && !__atomic_load_n(&drained, __ATOMIC_RELAXED)
                            ? store_encode(k, &p)
                            : NULL;
    uint64_t digest = p.ops->ticket_digest(p.sess);
    pooled_free(&p);
    if (st == NULL)
        return;
    pool_lock();
    if (gen != pool_generation() || (ledger_programs_locked(digest) && !is_held(digest)) ||
        drained) {
        pool_unlock(false);
        free(st);
        return;
    }
    ledger_reserve_locked(digest, st);
    pool_unlock(false);
}

void ledger_unreserve(const struct tls_ops *ops, const void *sess)
{
    uint64_t digest = ops->ticket_digest(sess);
    pool_lock();
    free(ledger_end_locked(digest));
    pool_unlock(false);
}

bool ledger_spend_shared(uint64_t digest, time_t now)
{
    return store_spend(digest, now) == 1;
}

/* Whether this process's program holds a ticket the store has (it took
 * it after the shim wrote it through): the shim leaves it there. */
static bool program_holds(uint64_t digest)
{
    pool_lock();
    bool held = ledger_programs_locked(digest);
    pool_unlock(false);
    return held;
}

void ledger_from_store(const struct key *k, time_t now, struct pooled *out)
{
    store_take(k, now, program_holds, out);
    if (out->sess != NULL && out->ops->is_tls13(out->sess)) {
        uint64_t digest = out->ops->ticket_digest(out->sess);
        pool_lock();
        ledger_offered_locked(digest);
        pool_unlock(false);
    }
}
