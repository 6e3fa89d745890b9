/*
 * nodelayclient: a TLS 1.2 client that turns TCP_NODELAY on itself, from
 * its info callback as each handshake starts, and reads it back once a
 * request was written and the reply read. Its sessions are its own
 * business only: it offers none (whatever resumes is the shim's doing).
 *
 * usage: nodelayclient PORT N
 * prints one line per connection: "resumed=0|1 nodelay=0|1"
 */
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/ssl.h>
#include "connect.h"

static void info_cb(const SSL *s, int where, int ret)
{
    (void)ret;
    int one = 1;
    if (where & SSL_CB_HANDSHAKE_START)
        setsockopt(SSL_get_fd(s), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int port = atoi(argv[1]), n = atoi(argv[2]), failed = 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || !SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION))
        return 1;
    SSL_CTX_set_info_callback(ctx, info_cb);
    for (int i = 0; i < n; i++) {
        int fd = tcp(port), on = -1;
        socklen_t len = sizeof on;
        SSL *s = SSL_new(ctx);
        char buf[512];
        static const char req[] = "GET / HTTP/1.0\r\n\r\n";
        if (fd < 0 || s == NULL || !SSL_set_fd(s, fd) || SSL_connect(s) != 1 ||
            SSL_write(s, req, sizeof req - 1) <= 0 || SSL_read(s, buf, sizeof buf) <= 0 ||
            getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) != 0) {
            failed++;
        } else {
            printf("resumed=%d nodelay=%d\n", SSL_session_reused(s), on != 0);
            SSL_shutdown(s);
        }
        SSL_free(s);
        if (fd >= 0)
            close(fd);
    }
    SSL_CTX_free(ctx);
    return failed != 0;
}
