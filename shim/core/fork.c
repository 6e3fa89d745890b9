/* One pthread_atfork for every room (fork.h). Registration happens during
 * set-up, before the program can fork through us; the handlers read a
 * count published with release order. */
#include <pthread.h>

#include "fork.h"

static struct handlers {
    void (*prepare)(void), (*parent)(void), (*child)(void);
    pthread_mutex_t *guarded;
} rooms[FORK_ROOMS];
static unsigned n_rooms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed, failed;

static void prepare(void)
{
    unsigned n = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        if (rooms[i].guarded != NULL)
            pthread_mutex_lock(rooms[i].guarded);
        else
            rooms[i].prepare();
    }
}

static void parent(void)
{
    for (unsigned i = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE); i-- > 0;) {
        if (rooms[i].guarded != NULL)
            pthread_mutex_unlock(rooms[i].guarded);
        else
            rooms[i].parent();
    }
}

static void child(void)
{
    for (unsigned i = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE); i-- > 0;) {
        if (rooms[i].guarded != NULL)
            pthread_mutex_init(rooms[i].guarded, NULL);
        else
            rooms[i].child();
    }
}

static bool add(struct handlers h)
{
    pthread_mutex_lock(&lock);
    if (!installed && !failed) {
        failed = pthread_atfork(prepare, parent, child) != 0;
        installed = !failed;
    }
    bool ok = installed && n_rooms < FORK_ROOMS;
    if (ok) {
        rooms[n_rooms] = h;
        __atomic_store_n(&n_rooms, n_rooms + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

bool fork_register(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return add((struct handlers){prepare, parent, child, NULL});
}

bool fork_guard(pthread_mutex_t *m)
{
    return add((struct handlers){NULL, NULL, NULL, m});
}
