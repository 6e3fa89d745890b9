/* The memo of successful checks (memo.h). A lookup compares a short hash
 * first and the whole key after, so a hit is exact, not probable. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fork.h"
#include "memo.h"

struct slot {
    uint64_t hash;
    size_t len; /* 0: empty */
    unsigned char key[MEMO_KEY_MAX];
};

static struct slot slots[MEMO_SLOTS];
static unsigned next; /* the slot the next entry takes: the oldest */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool usable;

static void init(void)
{
    usable = fork_guard(&lock);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    while (n-- > 0)
        h = (h ^ *p++) * 0x100000001b3u;
    return h;
}

bool memo_known(const void *key, size_t len)
{
    if (len == 0 || len > MEMO_KEY_MAX)
        return false;
    pthread_once(&once, init);
    if (!usable)
        return false;
    uint64_t h = fnv(key, len);
    bool hit = false;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < MEMO_SLOTS && !hit; i++)
        hit = slots[i].len == len && slots[i].hash == h && memcmp(slots[i].key, key, len) == 0;
    pthread_mutex_unlock(&lock);
    return hit;
}

void memo_keep(const void *key, size_t len)
{
    if (len == 0 || len > MEMO_KEY_MAX)
        return;
    pthread_once(&once, init);
    if (!usable)
        return;
    pthread_mutex_lock(&lock);
    struct slot *s = &slots[next];
    next = (next + 1) % MEMO_SLOTS;
    s->hash = fnv(key, len);
    s->len = len;
    memcpy(s->key, key, len);
    pthread_mutex_unlock(&lock);
}
