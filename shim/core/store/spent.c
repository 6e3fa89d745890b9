/* The store's table of spent tickets (spent.h): its slots, and the
 * store's calls that read and mark them. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "config.h"
#include "store.h"
#include "store/dir.h"
#include "store/lock.h"
#include "store/spent.h"

#define SPENT_SLOTS 65536
#define SPENT_PROBE 16
#define PROGRAM_BIT ((uint64_t)1 << 62)

int spent_mark(int fd, off_t size, uint64_t digest, time_t now, enum mark mark)
{
    const off_t whole = (off_t)SPENT_SLOTS * 16;
    unsigned char w[SPENT_PROBE * 16];
    uint64_t d = digest != 0 ? digest : 1; /* 0: an empty slot */
    off_t at = (off_t)(d % (SPENT_SLOTS - SPENT_PROBE + 1)) * 16;
    bool ok = (size == whole || ftruncate(fd, whole) == 0) &&
              pread(fd, w, sizeof w, at) == (ssize_t)sizeof w;
    int was = ok ? MARK_NONE : -1;
    /* The slot: a free one (empty or past), else the oldest mark's. */
    int pick = -1;
    int64_t pick_until = INT64_MAX;
    for (int i = 0; ok && i < SPENT_PROBE; i++) {
        uint64_t sd = 0, raw = 0;
        for (int b = 7; b >= 0; b--) {
            sd = sd << 8 | w[16 * i + b];
            raw = raw << 8 | w[16 * i + 8 + b];
        }
        int64_t until = (int64_t)(raw & ~PROGRAM_BIT);
        bool live = sd != 0 && until > now;
        if (live && sd == d)
            ok = false, was = raw & PROGRAM_BIT ? MARK_PROGRAM : MARK_SHIM;
        int64_t rank = live ? until : INT64_MIN;
        if (rank < pick_until) {
            pick = i;
            pick_until = rank;
        }
    }
    if (ok && pick >= 0 && mark != MARK_NONE) {
        unsigned char slot[16];
        uint64_t until = (uint64_t)((int64_t)now + MAX_LIFETIME);
        if (mark == MARK_PROGRAM)
            until |= PROGRAM_BIT;
        for (int b = 0; b < 8; b++) {
            slot[b] = (unsigned char)(d >> (8 * b));
            slot[8 + b] = (unsigned char)(until >> (8 * b));
        }
        if (pwrite(fd, slot, sizeof slot, at + 16 * pick) != (ssize_t)sizeof slot)
            was = -1;
    }
    return was;
}

/* Under the lock: the ticket's mark in DIR/spent (spent.h), made of kind
 * mark where there is none. */
int spend(int dfd, uint64_t digest, time_t now, enum mark mark)
{
    off_t size;
    int fd = open_file(dfd, "spent", O_RDWR | O_CREAT, &size);
    if (fd < 0)
        return -1;
    int was = spent_mark(fd, size, digest, now, mark);
    close(fd);
    return was;
}

int store_spend(uint64_t digest, time_t now)
{
    int saved = errno, r = -1;
    struct op op;
    if (op_begin(&op))
        r = spend(op.dfd, digest, now, MARK_SHIM);
    op_end(&op);
    errno = saved;
    return r < 0 ? -1 : r == MARK_NONE;
}

int store_mark(uint64_t digest, time_t now, enum mark mark)
{
    int saved = errno, r = -1;
    struct op op;
    if (op_begin(&op))
        r = spend(op.dfd, digest, now, mark);
    op_end(&op);
    errno = saved;
    return r;
}
