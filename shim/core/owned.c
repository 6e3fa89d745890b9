/* The tickets the application owns (owned.h). Under the pool's lock. */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "config.h"
#include "owned.h"

/* Whose each ticket is (ledger.h), the oldest first (uthash keeps the
 * order they were added): with no room, the oldest goes. */
enum kind { SPENT, PROGRAM, HELD };
struct mark {
    UT_hash_handle hh;
    uint64_t digest;
    enum kind kind;
};
static struct mark *marks;

static struct mark *mark_of(uint64_t d)
{
    struct mark *m;
    HASH_FIND(hh, marks, &d, sizeof d, m);
    return m;
}

static void add_mark(uint64_t d, enum kind kind)
{
    struct mark *m = marks;
    if (m != NULL && HASH_COUNT(marks) >= MARKS_MAX)
        HASH_DEL(marks, m); /* the oldest; its memory is reused */
    else
        m = malloc(sizeof *m);
    if (m == NULL)
        return;
    *m = (struct mark){.digest = d, .kind = kind};
    HASH_ADD(hh, marks, digest, sizeof m->digest, m);
}

void owned_offer(uint64_t d)
{
    if (mark_of(d) == NULL)
        add_mark(d, SPENT);
}

bool owned_is_spent(uint64_t d)
{
    const struct mark *m = mark_of(d);
    return m != NULL && m->kind == SPENT;
}

bool owned_is_disowned(uint64_t d)
{
    const struct mark *m = mark_of(d);
    return m != NULL && m->kind != SPENT;
}

bool owned_is_held(uint64_t d)
{
    const struct mark *m = mark_of(d);
    return m != NULL && m->kind == HELD;
}

/* One the shim offered stays spent: the program offering it again does
 * not make it its own. */
void owned_disown(uint64_t d)
{
    struct mark *m = mark_of(d);
    if (m == NULL)
        add_mark(d, PROGRAM);
    else if (m->kind == HELD)
        m->kind = PROGRAM;
}

void owned_hold(uint64_t d)
{
    if (mark_of(d) == NULL)
        add_mark(d, HELD);
}

#define RESERVED POOL_MAX
static struct reserved {
    uint64_t digest;
    struct stored *st;
} reserved[RESERVED];
static unsigned n_reserved;

void owned_reserve(uint64_t digest, struct stored *st)
{
    if (n_reserved == RESERVED) {
        free(reserved[0].st);
        memmove(&reserved[0], &reserved[1], (RESERVED - 1) * sizeof *reserved);
        n_reserved--;
    }
    reserved[n_reserved++] = (struct reserved){digest, st};
}

/* The others keep their order (oldest first). */
struct stored *owned_take(uint64_t digest)
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

unsigned owned_count(void)
{
    return n_reserved;
}

/* list NULL (no memory for one): the reservations are dropped. */
unsigned owned_drain(struct stored **list)
{
    unsigned n = n_reserved;
    for (unsigned i = 0; i < n_reserved; i++) {
        if (list != NULL)
            list[i] = reserved[i].st;
        else
            free(reserved[i].st);
        owned_disown(reserved[i].digest);
    }
    n_reserved = 0;
    return n;
}

void owned_forget_all(void)
{
    for (unsigned i = 0; i < n_reserved; i++)
        free(reserved[i].st);
    n_reserved = 0;
}
