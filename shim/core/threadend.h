/* threadend: what a thread's end must do with state the shim keeps per
 * thread (caches whose entries hold references, or secrets). */
#ifndef RESUMESHIM_THREADEND_H
#define RESUMESHIM_THREADEND_H

#include <stdbool.h>

/* fn runs as the calling thread ends, with the thread's own state (its
 * _Thread_local variables) still there; asked for again, it is listed
 * once. Asked for during the end, it runs again in the next round of the
 * thread's destructors, of which glibc makes at most
 * PTHREAD_DESTRUCTOR_ITERATIONS (4): each fn must be safe to run twice,
 * and the end must not refill what it cleans. false: it will not run (no
 * key, or the list full), and the caller keeps nothing that needs it. Not
 * run for a thread that calls exit(). */
bool thread_at_end(void (*fn)(void));

#endif
