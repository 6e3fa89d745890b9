/* The memo of checks (core/memo.c): exact keys, and a bounded size. */
#include <string.h>

#include "memo.h"
#include "unit.h"

TEST(memo_answers_only_the_exact_key)
{
    unsigned char k[64];
    memset(k, 7, sizeof k);
    CHECK(!memo_known(k, sizeof k));
    memo_keep(k, sizeof k);
    CHECK(memo_known(k, sizeof k));
    /* one bit anywhere, a shorter or a longer key: unknown */
    for (size_t i = 0; i < sizeof k; i++) {
        k[i] ^= 1;
        CHECK(!memo_known(k, sizeof k));
        k[i] ^= 1;
    }
    CHECK(!memo_known(k, sizeof k - 1));
    unsigned char longer[65];
    memset(longer, 7, sizeof longer);
    CHECK(!memo_known(longer, sizeof longer));
    CHECK(memo_known(k, sizeof k));
}

TEST(memo_is_bounded_and_forgets_the_oldest)
{
    unsigned char k[8] = {0};
    for (unsigned i = 0; i < MEMO_SLOTS + 1; i++) {
        memcpy(k, &i, sizeof i);
        memo_keep(k, sizeof k);
    }
    unsigned i = 0;
    memcpy(k, &i, sizeof i);
    CHECK(!memo_known(k, sizeof k)); /* the first, pushed out */
    for (i = 1; i < MEMO_SLOTS + 1; i++) {
        memcpy(k, &i, sizeof i);
        CHECK(memo_known(k, sizeof k));
    }
}

TEST(memo_keeps_no_empty_or_oversized_key)
{
    static unsigned char big[MEMO_KEY_MAX + 1];
    memo_keep(big, sizeof big);
    CHECK(!memo_known(big, sizeof big));
    memo_keep(big, 0);
    CHECK(!memo_known(big, 0));
    memo_keep(big, MEMO_KEY_MAX);
    CHECK(memo_known(big, MEMO_KEY_MAX));
}
