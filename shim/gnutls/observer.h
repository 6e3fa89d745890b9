/* observer: handshake hooks known to watch without deciding. */
#ifndef RESUMESHIM_GNUTLS_OBSERVER_H
#define RESUMESHIM_GNUTLS_OBSERVER_H

#include <stdbool.h>

#include "real.h"

/* Whether f, set for `when`, is a hook whose code was read on a verified
 * release and found to decide nothing: it returns 0 for every message, so
 * the messages a resumed handshake lacks change nothing but what it
 * records. */
bool observer(gnutls_handshake_hook_func f, int when);

#endif
