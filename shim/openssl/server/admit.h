/* admit: whether a server connection's client verification, as it stands
 * now, lets in the client of a session it is about to resume. */
#ifndef RESUMESHIM_ADMIT_H
#define RESUMESHIM_ADMIT_H

#include <stdbool.h>

#include "real.h"

/* True when a full handshake on s, as it is configured now (its context,
 * verify mode, parameters and callbacks), would have accepted the client
 * certificate the session carries, or no certificate when it carries none.
 * False also when that cannot be computed. */
bool admit_session(SSL *s, SSL_SESSION *sess);

#endif
