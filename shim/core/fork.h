/* fork: one pthread_atfork for every room that holds a lock. A room
 * registers its handlers once; prepare handlers run in the order of
 * registration, parent and child handlers in the reverse order, so that
 * locks are taken and released as a stack. */
#ifndef RESUMESHIM_FORK_H
#define RESUMESHIM_FORK_H

#include <pthread.h>
#include <stdbool.h>

#define FORK_ROOMS 16

/* False when there is no room left or pthread_atfork failed: the caller
 * must not take its lock across a fork it cannot hear of. */
bool fork_register(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* For a room whose only state a fork touches is a mutex: held across the
 * fork (no thread is inside the room then), released in the parent, made
 * anew in the child (whose copy is held by a thread that is gone). */
bool fork_guard(pthread_mutex_t *m);

#endif
