/* certcb: certificate callbacks (SSL_CTX_set_cert_cb, SSL_set_cert_cb),
 * seen to run. A client's runs only when the server asks for a
 * certificate (a CertificateRequest), never on a resumed handshake: a
 * session earned where it never ran holds no identity it chose, and one
 * earned where it ran is not kept (connkeep.c). */
#ifndef RESUMESHIM_OSSL_CERTCB_H
#define RESUMESHIM_OSSL_CERTCB_H

#include "real.h"

/* Set in the program's place (hooks.c); calls the connection's recorded
 * callback (settings.h: cert_fn) with the program's argument. */
int certcb_trampoline(SSL *s, void *arg);

#endif
