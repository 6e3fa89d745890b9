/* memo: answers of pure checks already made, each keyed by the exact bytes
 * of everything the answer depends on; only successes are kept, in a few
 * slots per book (a full book forgets its oldest entry), so a check whose
 * inputs differ in any byte is made again. An entry may hold only for a
 * span of time (the open interval lo < now < hi): a check whose answer
 * depends on the clock only through known bounds. */
#ifndef RESUMESHIM_MEMO_H
#define RESUMESHIM_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Keys longer than this are never kept (their check is always made). */
#define MEMO_KEY_MAX 65536
#define MEMO_SLOTS 32

/* The books, one a kind of check: a key of one is never looked up in
 * another. */
enum memo_book {
    MEMO_SIGNATURES, /* a signature verified (gnutls/judge/sigmemo.c) */
    MEMO_VERDICTS,   /* a chain verified (gnutls/judge/vmemo.c) */
    MEMO_BOOKS
};

/* An entry's span when the clock does not matter. */
#define MEMO_EVER_LO ((time_t)INT64_MIN)
#define MEMO_EVER_HI ((time_t)INT64_MAX)

/* Whether a check with exactly these inputs succeeded before, in an entry
 * whose span holds now. */
bool memo_known(enum memo_book b, const void *key, size_t len, time_t now);
/* A check with these inputs succeeded; its answer holds for lo < now < hi. */
void memo_keep(enum memo_book b, const void *key, size_t len, time_t lo, time_t hi);
/* Whether these inputs were noted before (by their hash: a collision only
 * lets a key be kept at its first success); notes them otherwise. For a
 * book whose keeping costs more than one check: kept at the second. */
bool memo_again(enum memo_book b, const void *key, size_t len);

#endif
