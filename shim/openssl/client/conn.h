/* conn: a client connection's life as the shim follows it, kept in SSL
 * ex_data: begin (compute the key, offer a session), handshake done (note
 * whether the server was verified and whether it resumed), first use
 * (publish what was held back), and free (drop whatever was never earned).
 * Driven by the hooks; it drives the core's pools and store. */
#ifndef RESUMESHIM_CONN_H
#define RESUMESHIM_CONN_H

#include <stdbool.h>

#include "config.h"
#include "real.h"

void conn_init(const struct config *cfg);
enum io { IO_HANDSHAKE, IO_READ, IO_WRITE };
/* A client handshake may start (the first of the nested hooks). */
void conn_begin(SSL *s);
/* True when the shim fails the call: the connection resumed a session
 * the shim offered, and the judge refused it (its chain under the
 * connection's configuration now, or its staple). */
bool conn_after(SSL *s, int ret, enum io io);
/* The shim offered a session and the handshake has not ended. */
bool conn_offer_pending(const SSL *s);
/* Around the application's status callback, inside a handshake. */
void conn_status_before(SSL *s);
void conn_status_after(SSL *s, int verdict);
/* A session the server sent; app_kept: the application's callback kept it. */
void conn_session(SSL *s, SSL_SESSION *sess, bool app_kept);
/* A connection whose handshake is done and used and whose first write was
 * pushed (tcp.c) needs nothing from the handshake, read and write
 * hooks until it is cleared or freed: the thread that last saw one keeps
 * it, with the epoch then, which every clear and free of a followed
 * connection changes (an address may be reused by a new SSL). A
 * keep-alive request then costs the hooks a few comparisons, not two
 * ex_data lookups (about 120 instructions). */
extern _Thread_local const SSL *conn_quiet;
extern _Thread_local unsigned long conn_quiet_epoch;
extern unsigned long conn_epoch;
static inline bool conn_is_quiet(const SSL *s)
{
    return s == conn_quiet && conn_quiet_epoch == __atomic_load_n(&conn_epoch, __ATOMIC_ACQUIRE);
}
/* A certificate callback runs on the connection: the server asked for a
 * certificate. */
void conn_cert_asked(SSL *s);
/* Before SSL_clear: whether the connection had a life to settle. After it,
 * conn_cleared settles it and readies the state for the next handshake. */
bool conn_clearing(SSL *s);
void conn_cleared(SSL *s);
/* After SSL_shutdown: the program may have done with the connection. */
void conn_shutdown(SSL *s);
/* The application took a session (SSL_get1_session). */
void conn_app_took(SSL *s, SSL_SESSION *sess);
/* The verified chain behind a connection resumed from a session restored
 * from the store, which carries the peer's leaf but not its chain. */
STACK_OF(X509) *conn_peer_chain(const SSL *s);
/* The chain the judge built for a resumed connection, as a full handshake's
 * verification leaves one (NULL: none). */
STACK_OF(X509) *conn_verified_chain(const SSL *s);

#endif
