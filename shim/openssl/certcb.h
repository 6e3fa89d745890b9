/* certcb: certificate callbacks (SSL_CTX_set_cert_cb, SSL_set_cert_cb),
 * seen to run. A client's runs only when the server asks for a
 * certificate (a CertificateRequest), never on a resumed handshake: a
 * session earned where it never ran holds no identity it chose, and one
 * earned where it ran is not kept (conn.c). */
#ifndef RESUMESHIM_OSSL_CERTCB_H
#define RESUMESHIM_OSSL_CERTCB_H

#include <stdbool.h>

#include "real.h"

void certcb_init(void);
/* Sets the program's callback on a connection through a trampoline that
 * tells the connection it ran; false when it could not (the caller sets
 * it as is). */
bool certcb_set_ssl(SSL *s, shim_cert_cb cb, void *arg);

#endif
