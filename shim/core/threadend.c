/* A thread's end (threadend.h): one POSIX key of the process, whose
 * destructor runs this thread's list. A thread that ends runs the
 * destructors of its keys' non-NULL values (a function that asks again
 * sets the value again, and glibc repeats the round, up to
 * PTHREAD_DESTRUCTOR_ITERATIONS times), with its thread-local storage
 * still there: the list and the state it cleans are the thread's own. */
#include <pthread.h>

#include "threadend.h"

#define FNS 4

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static bool key_made;

static _Thread_local void (*fns[FNS])(void);
static _Thread_local unsigned n_fns;

static void run(void *unused)
{
    (void)unused;
    void (*todo[FNS])(void);
    unsigned n = n_fns;
    for (unsigned i = 0; i < n; i++)
        todo[i] = fns[i];
    n_fns = 0;
    for (unsigned i = 0; i < n; i++)
        todo[i]();
}

static void make_key(void)
{
    key_made = pthread_key_create(&key, run) == 0;
}

bool thread_at_end(void (*fn)(void))
{
    for (unsigned i = 0; i < n_fns; i++)
        if (fns[i] == fn)
            return true;
    pthread_once(&once, make_key);
    if (!key_made || n_fns == FNS || pthread_setspecific(key, fns) != 0)
        return false;
    fns[n_fns++] = fn;
    return true;
}
