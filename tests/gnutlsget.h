/* One request over a new GnuTLS session, for the small GnuTLS test
 * clients: the handshake, a GET, the response read to its end, a close;
 * the handshake's result, and *resumed whether it resumed. */
#ifndef TESTS_GNUTLSGET_H
#define TESTS_GNUTLSGET_H

#include <gnutls/gnutls.h>

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

#endif
