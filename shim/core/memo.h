/* memo: answers of pure checks already made, each keyed by the exact bytes
 * of everything the answer depends on; only successes are kept, in a few
 * slots (a full memo forgets its oldest entry), so a check whose inputs
 * differ in any byte is made again. */
#ifndef RESUMESHIM_MEMO_H
#define RESUMESHIM_MEMO_H

#include <stdbool.h>
#include <stddef.h>

/* Keys longer than this are never kept (their check is always made). */
#define MEMO_KEY_MAX 1280
#define MEMO_SLOTS 32

/* Whether a check with exactly these inputs succeeded before. */
bool memo_known(const void *key, size_t len);
/* A check with these inputs succeeded. */
void memo_keep(const void *key, size_t len);

#endif
