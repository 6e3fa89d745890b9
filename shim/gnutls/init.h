/* init: the GnuTLS side's one-time set-up, on the first call of any of
 * its hooks: a program without GnuTLS never runs it, and a program with
 * both libraries starts the core once, from whichever side comes first. */
#ifndef RESUMESHIM_GNUTLS_INIT_H
#define RESUMESHIM_GNUTLS_INIT_H

#include <stdbool.h>

/* True when the shim acts on GnuTLS sessions in this process. */
bool gshim_active(void);

#endif
