/* One request over a new GnuTLS session, for the small GnuTLS test
 * clients: the handshake, a GET, the response read to its end, a close;
 * the handshake's result, and *resumed whether it resumed. */
#ifndef TESTS_GNUTLSGET_H
#define TESTS_GNUTLSGET_H

#include <stdio.h>

#include <gnutls/gnutls.h>

#include "connect.h"

static int gnutls_get(gnutls_session_t s, int *resumed)
{
    static const char get[] = "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";
    char reply[4096];
    ssize_t n;
    int r;
    *resumed = 0;
    do
        r = gnutls_handshake(s);
    while (r < 0 && !gnutls_error_is_fatal(r));
    if (r != 0)
        return r;
    gnutls_record_send(s, get, sizeof get - 1);
    do
        n = gnutls_record_recv(s, reply, sizeof reply);
    while (n > 0 || n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
    *resumed = gnutls_session_is_resumed(s);
    gnutls_bye(s, GNUTLS_SHUT_WR);
    return 0;
}

/* Connection i to 127.0.0.1:port, a request over it: a session with cred
 * and prio, which set(s) completes; prints "conn I handshake=ok|fail
 * resumed=0|1"; the handshake's result, -1 without a socket. */
static inline int gnutls_conn(int port, int i, gnutls_certificate_credentials_t cred, const char *prio,
                              void (*set)(gnutls_session_t))
{
    gnutls_session_t s;
    int fd = tcp(port), r = -1, resumed = 0;
    if (fd < 0)
        return -1;
    if (gnutls_init(&s, GNUTLS_CLIENT) == 0) {
        gnutls_priority_set_direct(s, prio, NULL);
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
        set(s);
        gnutls_transport_set_int(s, fd);
        r = gnutls_get(s, &resumed);
        gnutls_deinit(s);
    }
    close(fd);
    printf("conn %d handshake=%s resumed=%d\n", i, r == 0 ? "ok" : "fail", resumed);
    return r;
}

#endif
