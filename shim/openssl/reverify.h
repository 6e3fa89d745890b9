/* reverify: connections whose application judges the server by callback
 * are offered a session only after that judge accepted the session's
 * server again, now. */
#ifndef RESUMESHIM_REVERIFY_H
#define RESUMESHIM_REVERIFY_H

#include <stdbool.h>

#include "real.h"
#include "settings.h"

bool reverify_needed(SSL *s, const struct recorded *ctx_rec);
bool reverify_session(SSL *s, const struct recorded *ctx_rec, SSL_SESSION *sess,
                      STACK_OF(X509) *chain);

#endif
