/* threadend: what a thread's end must do with state the shim keeps per
 * thread (caches whose entries hold references, or secrets). */
#ifndef RESUMESHIM_THREADEND_H
#define RESUMESHIM_THREADEND_H

#include <stdbool.h>

/* fn runs as the calling thread ends (once, however often it is asked
 * for, and again if it asks during the end). false: it will not run, and
 * the caller keeps nothing that needs it. Not run for the thread that
 * calls exit(). */
bool thread_at_end(void (*fn)(void));

#endif
