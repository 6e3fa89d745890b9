/* verdict: what a session's verdict depended on, read off OpenSSL objects
 * into the core's cache key (core/key.h): a client connection's key, and a
 * server configuration's fingerprint.
 *
 * A resumed handshake does not verify the server again; OpenSSL copies the
 * stored verify result (measured: a session from a test.example connection
 * resumed under SSL_set1_host("other.example") and under a context with no
 * CA store). So a session may only be offered to a connection that would
 * have judged the server exactly as the one that earned it did. */
#ifndef RESUMESHIM_VERDICT_H
#define RESUMESHIM_VERDICT_H

#include <stdbool.h>

#include "ctx.h"
#include "key.h"
#include "real.h"
#include "settings.h"

/* conn: the connection's recorded settings (may be NULL); ctx its
 * context's parts. listed: fill the name the store lists the server under. */
void verdict_key(SSL *s, const struct recorded *conn, const struct ctx_parts *ctx, bool listed,
                 struct key *k);
/* A digest of the identity the client would present now (identity.c);
 * false when it cannot be read. Taken as the handshake begins and again
 * when a session is kept, which a program that changed its certificate
 * in between does not earn under the key it began with. */
/* Verify parameters were given an address to check (the two setters'
 * hooks, before the setter runs). */
void verdict_ip_given(void);
bool verdict_identity(SSL *s, const struct ctx_parts *ctx, unsigned char out[32]);
/* The fingerprint of a server connection's configuration: what a ticket it
 * issues may be accepted under. False when it cannot be told apart. */
bool verdict_server_conf(SSL *s, const struct recorded *conn, const struct ctx_parts *ctx,
                         unsigned char conf[32]);

#endif
