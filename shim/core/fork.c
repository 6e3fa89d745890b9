/* One pthread_atfork for every room (fork.h). Registration happens during
 * set-up, before the program can fork through us; the handlers read a
 * count published with release order. */
#include <pthread.h>

#include "fork.h"

#define ROOMS 8

static struct handlers {
    void (*prepare)(void), (*parent)(void), (*child)(void);
} rooms[ROOMS];
static unsigned n_rooms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed, failed;

static void prepare(void)
{
    unsigned n = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        rooms[i].prepare();
}

static void parent(void)
{
    for (unsigned i = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE); i-- > 0;)
        rooms[i].parent();
}

static void child(void)
{
    for (unsigned i = __atomic_load_n(&n_rooms, __ATOMIC_ACQUIRE); i-- > 0;)
        rooms[i].child();
}

bool fork_register(void (*pre)(void), void (*par)(void), void (*chi)(void))
{
    pthread_mutex_lock(&lock);
    if (!installed && !failed) {
        failed = pthread_atfork(prepare, parent, child) != 0;
        installed = !failed;
    }
    bool ok = installed && n_rooms < ROOMS;
    if (ok) {
        rooms[n_rooms] = (struct handlers){pre, par, chi};
        __atomic_store_n(&n_rooms, n_rooms + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}
