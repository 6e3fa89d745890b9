/* The memo of successful checks (memo.h). A lookup compares a short hash
 * first and the whole key after, so a hit is exact, not probable. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "memo.h"

struct slot {
    uint64_t hash;
    size_t len; /* 0: empty */
    unsigned char *key;
    time_t lo, hi;
};

static struct book {
    pthread_mutex_t lock;
    struct slot slots[MEMO_SLOTS];
    unsigned next; /* the slot the next entry takes: the oldest */
    uint64_t noted[MEMO_SLOTS];
    unsigned next_noted;
} books[MEMO_BOOKS];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool usable;

static void init(void)
{
    usable = true;
    for (unsigned i = 0; i < MEMO_BOOKS; i++)
        usable &= pthread_mutex_init(&books[i].lock, NULL) == 0 && fork_guard(&books[i].lock);
}

static struct book *book(enum memo_book b, size_t len)
{
    if (len == 0 || len > MEMO_KEY_MAX || (unsigned)b >= MEMO_BOOKS)
        return NULL;
    pthread_once(&once, init);
    return usable ? &books[b] : NULL;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    while (n-- > 0)
        h = (h ^ *p++) * 0x100000001b3u;
    return h;
}

bool memo_known(enum memo_book b, const void *key, size_t len, time_t now)
{
    struct book *bk = book(b, len);
    if (bk == NULL)
        return false;
    uint64_t h = fnv(key, len);
    bool hit = false;
    pthread_mutex_lock(&bk->lock);
    for (unsigned i = 0; i < MEMO_SLOTS && !hit; i++) {
        const struct slot *s = &bk->slots[i];
        hit = s->len == len && s->hash == h && s->lo < now && now < s->hi &&
              memcmp(s->key, key, len) == 0;
    }
    pthread_mutex_unlock(&bk->lock);
    return hit;
}

void memo_keep(enum memo_book b, const void *key, size_t len, time_t lo, time_t hi)
{
    struct book *bk = book(b, len);
    unsigned char *copy = bk != NULL ? malloc(len) : NULL;
    if (copy == NULL)
        return;
    memcpy(copy, key, len);
    pthread_mutex_lock(&bk->lock);
    struct slot *s = &bk->slots[bk->next];
    bk->next = (bk->next + 1) % MEMO_SLOTS;
    unsigned char *old = s->key;
    *s = (struct slot){fnv(key, len), len, copy, lo, hi};
    pthread_mutex_unlock(&bk->lock);
    free(old);
}

bool memo_again(enum memo_book b, const void *key, size_t len)
{
    struct book *bk = book(b, len);
    if (bk == NULL)
        return false;
    uint64_t h = fnv(key, len);
    bool again = false;
    pthread_mutex_lock(&bk->lock);
    for (unsigned i = 0; i < MEMO_SLOTS && !again; i++)
        again = bk->noted[i] == h;
    if (!again) {
        bk->noted[bk->next_noted] = h;
        bk->next_noted = (bk->next_noted + 1) % MEMO_SLOTS;
    }
    pthread_mutex_unlock(&bk->lock);
    return again;
}
