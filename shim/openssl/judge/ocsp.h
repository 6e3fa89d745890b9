/* ocsp: the application's OCSP status callback, with the staple a
 * session's full handshake received shown again on resumption. */
#ifndef RESUMESHIM_OCSP_H
#define RESUMESHIM_OCSP_H

#include <stdbool.h>
#include <time.h>

#include "real.h"
#include "seam.h"

enum ocsp_judge {
    OCSP_NONE,    /* the connection asks for no staple */
    OCSP_STAPLE,  /* asks for one, judged by no callback */
    OCSP_JUDGED,  /* asks, and the application's callback judges it */
    OCSP_UNKNOWN, /* a callback the shim does not stand in for */
};
/* before runs ahead of the application's callback inside a handshake,
 * after is given its verdict (conndone.c's, wired by init.c). */
void ocsp_init(void (*before)(SSL *s), void (*after)(SSL *s, int verdict));
/* The application sets (or clears) a context's status callback: the
 * shim's stands in for it. False when the call is left to OpenSSL. */
bool ocsp_set_cb(SSL_CTX *ctx, void (*fp)(void), long *ret);
/* The application reads the callback back (parg as for the ctrl). */
void ocsp_hide_cb(SSL_CTX *ctx, void *parg);
enum ocsp_judge ocsp_judge_of(SSL *s);
/* Calls the application's callback, as OpenSSL would. */
int ocsp_ask(SSL *s);
/* Puts the chain's staple (none: nothing) on the connection, as the
 * response the server sent. False when it could not. */
bool ocsp_present(SSL *s, const struct chain *c);
/* The earliest nextUpdate in a response; none: no bound (LONG_MAX); one
 * that cannot be read: 0. */
time_t ocsp_valid_until(const unsigned char *der, size_t len);

#endif
