/* start: the core's one-time set-up, shared by the backends. Whichever
 * backend's hooks run first start it: the configuration, the log, the
 * pools, the store, the fork handlers and the flush at exit. */
#ifndef RESUMESHIM_START_H
#define RESUMESHIM_START_H

#include <stdbool.h>

#include "config.h"

/* The configuration (read once, warnings logged), with the core set up
 * unless it is disabled. started: whether the core is up (false when
 * disabled, or when it could not be). Cheap after the first call. */
const struct config *core_start(bool *started);
/* A backend's sessions that live on its connections still (a program
 * that exits without closing them): fn hands them to the pool before the
 * exit flush. One backend needs it (GnuTLS: OpenSSL's connections reserve
 * theirs as they go); registered by its set-up. */
void core_before_flush(void (*fn)(void));

#endif
