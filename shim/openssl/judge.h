/* judge: the server behind a session verified again, as libssl verifies a
 * server's chain in a full handshake. The key chooses which session is
 * offered; the judge decides whether a resumed connection may go on. */
#ifndef RESUMESHIM_JUDGE_H
#define RESUMESHIM_JUDGE_H

#include "real.h"
#include "settings.h"

/* After a resumed handshake, under the connection's configuration as it
 * is now: the connection's verify result becomes the verification's, as
 * in a full handshake, and VERDICT_REFUSED means the full handshake with
 * this outcome would have failed (the caller fails the call). */
enum verdict { VERDICT_PASSED, VERDICT_REFUSED };
enum verdict judge_resumed(SSL *s, const struct recorded *ctx_rec, STACK_OF(X509) *chain);

#endif
