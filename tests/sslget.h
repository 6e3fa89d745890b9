/* One request over a new TLS connection, for the small OpenSSL test
 * clients: SSL_connect, a GET, the response read to its end. 1 when all
 * of it worked. */
#ifndef TESTS_SSLGET_H
#define TESTS_SSLGET_H

#include <openssl/ssl.h>

static int ssl_get(SSL *s)
{
    char buf[4096];
    const char req[] = "GET / HTTP/1.0\r\nHost: test\r\n\r\n";
    int total = 0, n;
    if (SSL_connect(s) != 1 || SSL_write(s, req, sizeof req - 1) <= 0)
        return 0;
    while ((n = SSL_read(s, buf, sizeof buf)) > 0)
        total += n;
    return total > 0;
}

#endif
