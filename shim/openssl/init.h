/* init: the one-time set-up of the OpenSSL side, on the first call of any
 * hook rather than at load time: a program that never touches OpenSSL pays
 * nothing. The one place that wires the rooms together. */
#ifndef RESUMESHIM_INIT_H
#define RESUMESHIM_INIT_H

#include <stdbool.h>

#include "config.h"

/* True when the shim is to act in this process (resolved, not disabled).
 * Cheap after the first call. */
bool shim_active(void);
/* Whether set-up has already made the shim active, without starting it. */
bool shim_started(void);
/* The configuration set-up read (valid once shim_active ran). */
const struct config *shim_config(void);
/* Whether the server mode runs: asked for, and verified on this OpenSSL
 * (valid once shim_active ran). */
bool shim_serving(void);

#endif
