/* A program linked to both OpenSSL 3 and GnuTLS (as git is, through
 * libcurl-gnutls and libcrypto), using both for TLS: its connections to
 * one server alternate between the two libraries, a new session each, no
 * resumption of its own. Each sends one HTTP/1.0 GET and reads the
 * response to the end (TLS 1.3 tickets come after the handshake).
 *
 * usage: dualclient PORT CAFILE N
 * Prints "lib=openssl|gnutls resumed=0|1" per connection; exits 1 when
 * any connection failed. Connects to 127.0.0.1, sends and verifies the
 * name localhost. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connect.h"

#include <gnutls/gnutls.h>
#include <openssl/ssl.h>

static const char request[] = "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";


static int with_openssl(SSL_CTX *ctx, int port)
{
    int fd = tcp(port), resumed = -1;
    SSL *s = fd >= 0 ? SSL_new(ctx) : NULL;
    char buf[4096];
    if (s != NULL && SSL_set_fd(s, fd) == 1 && SSL_set_tlsext_host_name(s, "localhost") == 1 &&
        SSL_set1_host(s, "localhost") == 1 && SSL_connect(s) == 1 &&
        SSL_write(s, request, sizeof request - 1) > 0) {
        while (SSL_read(s, buf, sizeof buf) > 0)
            ;
        resumed = SSL_session_reused(s);
        SSL_shutdown(s);
    }
    SSL_free(s);
    if (fd >= 0)
        close(fd);
    return resumed;
}

static int with_gnutls(gnutls_certificate_credentials_t cred, int port)
{
    int fd = tcp(port), resumed = -1, r;
    gnutls_session_t s;
    char buf[4096];
    if (fd < 0 || gnutls_init(&s, GNUTLS_CLIENT) != 0)
        return -1;
    if (gnutls_set_default_priority(s) == 0 &&
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) == 0 &&
        gnutls_server_name_set(s, GNUTLS_NAME_DNS, "localhost", 9) == 0) {
        gnutls_session_set_verify_cert(s, "localhost", 0);
        gnutls_transport_set_int(s, fd);
        do
            r = gnutls_handshake(s);
        while (r < 0 && !gnutls_error_is_fatal(r));
        if (r == 0 && gnutls_record_send(s, request, sizeof request - 1) > 0) {
            do
                r = (int)gnutls_record_recv(s, buf, sizeof buf);
            while (r > 0 || r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
            resumed = gnutls_session_is_resumed(s);
            gnutls_bye(s, GNUTLS_SHUT_WR);
        }
    }
    gnutls_deinit(s);
    close(fd);
    return resumed;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: dualclient PORT CAFILE N\n");
        return 2;
    }
    int port = atoi(argv[1]), n = atoi(argv[3]), failed = 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    gnutls_certificate_credentials_t cred;
    if (ctx == NULL || SSL_CTX_load_verify_locations(ctx, argv[2], NULL) != 1 ||
        gnutls_certificate_allocate_credentials(&cred) != 0 ||
        gnutls_certificate_set_x509_trust_file(cred, argv[2], GNUTLS_X509_FMT_PEM) <= 0)
        return 2;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    for (int i = 0; i < n; i++) {
        int a = with_openssl(ctx, port), b = with_gnutls(cred, port);
        printf("lib=openssl resumed=%d\nlib=gnutls resumed=%d\n", a, b);
        failed += (a < 0) + (b < 0);
    }
    SSL_CTX_free(ctx);
    gnutls_certificate_free_credentials(cred);
    return failed > 0;
}
