/* later: what releases after 3.0 added that changes what a connection is
 * (QUIC, raw public keys), read where the running library has it. */
#ifndef RESUMESHIM_LATER_H
#define RESUMESHIM_LATER_H

#include <stdbool.h>

#include "real.h"

/* Whether m is one of QUIC's methods (3.2 on): such a context is left
 * alone entirely. */
bool later_quic(const SSL_METHOD *m);
/* Whether s was told which certificate types to accept from the server or
 * to present (RFC 7250's raw public keys, 3.2 on): its verdict and its
 * identity are then more than a chain and a certificate. */
bool later_cert_types(const SSL *s);

#endif
