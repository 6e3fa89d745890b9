/* The memo of checks (core/memo.c): exact keys, a bounded size, books
 * apart, and an entry only within its span of time. */
#include <string.h>

#include "memo.h"
#include "unit.h"

TEST(memo_answers_only_the_exact_key)
{
    unsigned char k[64];
    memset(k, 7, sizeof k);
    CHECK(!memo_known(MEMO_SIGNATURES, k, sizeof k, 0));
    memo_keep(MEMO_SIGNATURES, k, sizeof k, MEMO_EVER_LO, MEMO_EVER_HI);
    CHECK(memo_known(MEMO_SIGNATURES, k, sizeof k, 0));
    /* one bit anywhere, a shorter or a longer key: unknown */
    for (size_t i = 0; i < sizeof k; i++) {
        k[i] ^= 1;
        CHECK(!memo_known(MEMO_SIGNATURES, k, sizeof k, 0));
        k[i] ^= 1;
    }
    CHECK(!memo_known(MEMO_SIGNATURES, k, sizeof k - 1, 0));
    unsigned char longer[65];
    memset(longer, 7, sizeof longer);
    CHECK(!memo_known(MEMO_SIGNATURES, longer, sizeof longer, 0));
    CHECK(memo_known(MEMO_SIGNATURES, k, sizeof k, 0));
}

TEST(memo_is_bounded_and_forgets_the_oldest)
{
    unsigned char k[8] = {0};
    for (unsigned i = 0; i < MEMO_SLOTS + 1; i++) {
        memcpy(k, &i, sizeof i);
        memo_keep(MEMO_SIGNATURES, k, sizeof k, MEMO_EVER_LO, MEMO_EVER_HI);
    }
    unsigned i = 0;
    memcpy(k, &i, sizeof i);
    CHECK(!memo_known(MEMO_SIGNATURES, k, sizeof k, 0)); /* the first, pushed out */
    for (i = 1; i < MEMO_SLOTS + 1; i++) {
        memcpy(k, &i, sizeof i);
        CHECK(memo_known(MEMO_SIGNATURES, k, sizeof k, 0));
    }
}

TEST(memo_keeps_no_empty_or_oversized_key)
{
    static unsigned char big[MEMO_KEY_MAX + 1];
    memo_keep(MEMO_SIGNATURES, big, sizeof big, MEMO_EVER_LO, MEMO_EVER_HI);
    CHECK(!memo_known(MEMO_SIGNATURES, big, sizeof big, 0));
    memo_keep(MEMO_SIGNATURES, big, 0, MEMO_EVER_LO, MEMO_EVER_HI);
    CHECK(!memo_known(MEMO_SIGNATURES, big, 0, 0));
    memo_keep(MEMO_SIGNATURES, big, MEMO_KEY_MAX, MEMO_EVER_LO, MEMO_EVER_HI);
    CHECK(memo_known(MEMO_SIGNATURES, big, MEMO_KEY_MAX, 0));
}

TEST(memo_books_apart_and_spans_of_time)
{
    unsigned char k[16];
    memset(k, 9, sizeof k);
    memo_keep(MEMO_VERDICTS, k, sizeof k, 100, 200);
    CHECK(!memo_known(MEMO_SIGNATURES, k, sizeof k, 150));
    CHECK(memo_known(MEMO_VERDICTS, k, sizeof k, 150));
    /* the open interval: not at its bounds, nor outside */
    CHECK(!memo_known(MEMO_VERDICTS, k, sizeof k, 100));
    CHECK(!memo_known(MEMO_VERDICTS, k, sizeof k, 200));
    CHECK(!memo_known(MEMO_VERDICTS, k, sizeof k, 99));
    CHECK(!memo_known(MEMO_VERDICTS, k, sizeof k, 201));
}

TEST(memo_notes_a_key_once)
{
    unsigned char k[16];
    memset(k, 5, sizeof k);
    CHECK(!memo_again(MEMO_VERDICTS, k, sizeof k));
    CHECK(memo_again(MEMO_VERDICTS, k, sizeof k));
    k[0] ^= 1;
    CHECK(!memo_again(MEMO_VERDICTS, k, sizeof k));
}
