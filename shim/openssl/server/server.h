/* server: the server mode's ticket-key callback on server contexts. */
#ifndef RESUMESHIM_SERVER_H
#define RESUMESHIM_SERVER_H

#include <stdbool.h>

#include "real.h"

/* rotate: the ticket keys' period, in seconds. */
void server_init(long rotate);
/* False when the server mode cannot run (no shared memory for the ring). */
bool server_install(SSL_CTX *ctx);
void server_remove(SSL_CTX *ctx);
/* The application sets session-ticket callbacks on ctx: false when the
 * server mode does not serve it (the real call is then the application's);
 * otherwise they are kept, called by the server mode's own in their place. */
bool server_app_ticket_cb(SSL_CTX *ctx, SSL_CTX_generate_session_ticket_fn gen,
                          SSL_CTX_decrypt_session_ticket_fn dec, void *arg);
/* A server connection's handshake starts. (Not undone by SSL_clear:
 * OpenSSL calls that itself as a handshake starts.) */
void server_begin(SSL *s);

#endif
