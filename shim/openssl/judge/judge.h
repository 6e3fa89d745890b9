/* judge: the server behind a session verified again, as libssl verifies a
 * server's chain in a full handshake. The key chooses which session is
 * offered; the judge decides whether a resumed connection may go on. */
#ifndef RESUMESHIM_JUDGE_H
#define RESUMESHIM_JUDGE_H

#include "real.h"
#include "ctx.h"

/* After a resumed handshake, under the connection's configuration as it
 * is now: the connection's verify result becomes the verification's, as
 * in a full handshake, *verified the chain it built (the caller's to free,
 * NULL for none), and VERDICT_REFUSED means the full handshake with
 * this outcome would have failed (the caller fails the call).
 * VERDICT_UNJUDGED: an input the judge cannot see appeared after the
 * offer, and the connection must not go on as if judged. */
enum verdict { VERDICT_PASSED, VERDICT_REFUSED, VERDICT_UNJUDGED, VERDICT_PENDING };
enum verdict judge_resumed(SSL *s, const struct ctx_parts *parts, STACK_OF(X509) *chain,
                           STACK_OF(X509) **verified);
/* ssl_verify_cert_chain's set-up and verification of a peer's chain
 * (leaf first), as libssl makes it on s in a full handshake: the judge's
 * of a server's, and with server, a server's of its client's (admit.c).
 * Returns what it returns (> 0 verified), the verify error in *err. A
 * client's verification also gives the chain it built (*verified, the
 * caller's to free) and moves the matched peer name to s. A server's
 * keeps the server mode's own rules: the "ssl_client" defaults, no DANE
 * state, and a set-up that fails is a failure (a full handshake). */
int judge_verify(SSL *s, const struct ctx_parts *parts, X509 *leaf, STACK_OF(X509) *chain,
                 bool server, long *err, STACK_OF(X509) **verified);
/* SSL_set_retry_verify was called on s: inside a judgment, a verify
 * callback suspends it (VERDICT_PENDING), as it would a full handshake. */
void judge_retry_asked(const SSL *s);

#endif
