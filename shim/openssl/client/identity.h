/* identity: who a client connection can be to a server, in its key. A
 * session stands for the client that earned it (the server resumes it as
 * that client), so it is offered only where the connection could present
 * nothing else. */
#ifndef RESUMESHIM_IDENTITY_H
#define RESUMESHIM_IDENTITY_H

#include "algs.h"
#include "key.h"
#include "real.h"

/* At set-up, before any connection. */
void identity_init(void);
/* Puts every credential the connection could present into the key; NULL,
 * or why the shim cannot tell them (no session is offered then).
 * sigalgs: the program set signature algorithms on the connection or its
 * context (settings.h). which: which slot is current too (a TLS 1.3
 * handshake makes the slot it sends current: read again afterwards, the
 * identity leaves it out). */
const char *identity_put(struct key *k, SSL *s, const struct algs *algs, bool sigalgs,
                         bool which);

#endif
