/* appsess: a client handshake that starts with a session the shim did not
 * offer runs on a private copy of it where the shim's cache-mode bit would
 * mark it not resumable; the application keeps seeing its own. */
#ifndef RESUMESHIM_APPSESS_H
#define RESUMESHIM_APPSESS_H

#include "real.h"

void appsess_init(void);
/* The handshake starts with the connection's session own. */
void appsess_begin(SSL *s, SSL_SESSION *own);
/* SSL_clear is about to end the connection's handshake and session. */
void appsess_clearing(const SSL *s);
/* The application sets a session (or none) itself. */
void appsess_forget(SSL *s);
/* The session to show the application for the connection's real one. */
SSL_SESSION *appsess_shown(const SSL *s, SSL_SESSION *real);

#endif
