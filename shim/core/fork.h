/* fork: one pthread_atfork for every room that holds a lock. A room
 * registers its handlers once; prepare handlers run in the order of
 * registration, parent and child handlers in the reverse order, so that
 * locks are taken and released as a stack. */
#ifndef RESUMESHIM_FORK_H
#define RESUMESHIM_FORK_H

#include <stdbool.h>

/* False when there is no room left or pthread_atfork failed: the caller
 * must not take its lock across a fork it cannot hear of. */
bool fork_register(void (*prepare)(void), void (*parent)(void), void (*child)(void));

#endif
