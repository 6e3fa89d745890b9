/*
 * vhostclient: three connections to vhostserver, each offering the session
 * of the one before, that try to carry a ticket into the default host
 * (which requires a client certificate) without showing a certificate.
 * The server's log is the verdict; this program prints, per connection,
 * "cN: ok resumed=0|1 ticket=0|1" or "cN: fail" (or "c3: no session"),
 * and fails only when it cannot connect.
 *
 * usage: vhostclient hrr PORT CLIENT.pem | vhostclient sessid PORT
 *   hrr     TLS 1.3. c1: no server name, the client certificate of
 *           CLIENT.pem (certificate and key). c2: no name, offering c1's
 *           session; after the HelloRetryRequest (the server takes P-256
 *           only) the second ClientHello names b.test. c3: no name, c2's
 *           session.
 *   sessid  TLS 1.2. c1: b.test, no ticket (the session is in the
 *           server's cache). c2: b.test, c1's session by its id, with an
 *           empty ticket extension. c3: no name, c2's session, if it
 *           carries a ticket (a session id alone would resume from the
 *           server's cache, in any host, as OpenSSL does).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

static int port;
static const char *rename_after_hrr;

/* On the HelloRetryRequest (a ServerHello before any other), change the
 * server name the second ClientHello sends. */
static void msg_cb(int write_p, int version, int type, const void *buf, size_t len, SSL *s,
                   void *arg)
{
    (void)version, (void)arg;
    const unsigned char *p = buf;
    if (!write_p && type == SSL3_RT_HANDSHAKE && len > 0 && p[0] == SSL3_MT_SERVER_HELLO
        && rename_after_hrr) {
        SSL_set_tlsext_host_name(s, rename_after_hrr);
        rename_after_hrr = NULL;
    }
}

static SSL_SESSION *conn(SSL_CTX *ctx, const char *tag, const char *sni, SSL_SESSION *offer,
                         int no_ticket)
{
    struct timeval tv = { .tv_sec = 10, .tv_usec = 0 };
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("connect");
        exit(1);
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL *s = SSL_new(ctx);
    if (!s)
        exit(1);
    if (no_ticket)
        SSL_set_options(s, SSL_OP_NO_TICKET);
    if (sni)
        SSL_set_tlsext_host_name(s, sni);
    if (offer)
        SSL_set_session(s, offer);
    SSL_set_msg_callback(s, msg_cb);
    SSL_set_fd(s, fd);
    SSL_SESSION *out = NULL;
    char buf[256];
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    /* a TLS 1.3 server's tickets come after the handshake: read them */
    if (SSL_connect(s) == 1 && SSL_write(s, req, (int)(sizeof req - 1)) > 0
        && SSL_read(s, buf, sizeof buf) > 0) {
        out = SSL_get1_session(s);
        printf("%s: ok resumed=%d ticket=%d\n", tag, SSL_session_reused(s) ? 1 : 0,
               SSL_SESSION_has_ticket(out));
        SSL_shutdown(s);
    } else {
        printf("%s: fail\n", tag);
    }
    ERR_clear_error();
    SSL_free(s);
    close(fd);
    return out;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "hrr") == 0 ? argc != 4 : strcmp(argv[1], "sessid") != 0
                                                                  || argc != 3)) {
        fprintf(stderr, "usage: vhostclient hrr PORT CLIENT.pem | vhostclient sessid PORT\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    port = atoi(argv[2]);
    int hrr = strcmp(argv[1], "hrr") == 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX *with_cert = SSL_CTX_new(TLS_client_method());
    if (!ctx || !with_cert)
        return 1;
    int v = hrr ? TLS1_3_VERSION : TLS1_2_VERSION;
    SSL_CTX_set_min_proto_version(ctx, v);
    SSL_CTX_set_max_proto_version(ctx, v);
    SSL_CTX_set_min_proto_version(with_cert, v);
    SSL_CTX_set_max_proto_version(with_cert, v);
    SSL_SESSION *s1, *s2 = NULL;
    if (hrr) {
        if (SSL_CTX_use_certificate_chain_file(with_cert, argv[3]) != 1
            || SSL_CTX_use_PrivateKey_file(with_cert, argv[3], SSL_FILETYPE_PEM) != 1) {
            ERR_print_errors_fp(stderr);
            return 1;
        }
        s1 = conn(with_cert, "c1", NULL, NULL, 0);
        rename_after_hrr = "b.test";
        if (s1)
            s2 = conn(ctx, "c2", NULL, s1, 0);
        rename_after_hrr = NULL;
    } else {
        s1 = conn(ctx, "c1", "b.test", NULL, 1);
        if (s1)
            s2 = conn(ctx, "c2", "b.test", s1, 0);
    }
    if (s2 && (hrr || SSL_SESSION_has_ticket(s2)))
        SSL_SESSION_free(conn(ctx, "c3", NULL, s2, 0));
    else
        printf("c3: no session\n");
    SSL_SESSION_free(s1);
    SSL_SESSION_free(s2);
    SSL_CTX_free(ctx);
    SSL_CTX_free(with_cert);
    return 0;
}
