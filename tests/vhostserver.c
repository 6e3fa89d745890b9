/*
 * vhostserver: one SSL_CTX serving two virtual hosts, as a server with a
 * name callback does; for the server mode's tests.
 *
 * The default host requires a client certificate signed by the CA of
 * --ca; the host named b.test asks for none. Both use the certificate of
 * --cert and --key, the same session id context and OpenSSL's session
 * cache; the name callback switches a connection to b.test's context. A
 * ticket must never let a client into the default host without a
 * certificate. For every connection one log line:
 *   conn=N status=ok|fail hellos=H sni=NAME|- version=V vhost=default|b.test
 *       peercert=0|1 resumed=0|1 tickets=K
 * (hellos: ClientHellos, 2 after a HelloRetryRequest; sni: the name the
 * last one sent; tickets: NewSessionTicket messages sent that carry a
 * ticket).
 *
 * usage: vhostserver --cert FILE --key FILE --ca FILE [--port-file FILE]
 *                    [--log FILE] [--max N] [--groups LIST] [--hello-switch] [--dup]
 *   --groups LIST  key exchange groups: P-256 meets a client's X25519 key
 *                  share with a HelloRetryRequest
 *   --hello-switch switch hosts in the ClientHello callback instead, with
 *                  no name callback: OpenSSL then acknowledges no name and
 *                  keeps none in a TLS 1.2 session
 *   --dup          after each connection, SSL_clear the SSL, SSL_dup it and
 *                  free the copy, as a server that clones a template SSL
 *   --max N        exit after N connections
 * Single-threaded; listens on 127.0.0.1 only.
 */
#include <arpa/inet.h>
#include <errno.h>
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
#include "listen.h"

static SSL_CTX *ctx_default, *ctx_b;
static int hello_switch;

static void switch_to(SSL *s, SSL_CTX *ctx)
{
    if (SSL_get_SSL_CTX(s) != ctx) {
        SSL_set_SSL_CTX(s, ctx);
        SSL_set_verify(s, SSL_CTX_get_verify_mode(ctx), NULL);
    }
}

/* What the ClientHellos of one connection showed. */
struct hello {
    int hellos;
    char sni[256];
};

static int hello_cb(SSL *s, int *al, void *arg)
{
    (void)al, (void)arg;
    struct hello *h = SSL_get_app_data(s);
    const unsigned char *p;
    size_t len;
    h->hellos++;
    strcpy(h->sni, "-");
    /* a list of one entry: length, type, length, name */
    if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &p, &len) == 1 && len > 5
        && p[2] == TLSEXT_NAMETYPE_host_name) {
        size_t n = (size_t)p[3] << 8 | p[4];
        if (n <= len - 5 && n < sizeof h->sni) {
            memcpy(h->sni, p + 5, n);
            h->sni[n] = '\0';
        }
    }
    if (hello_switch)
        switch_to(s, strcmp(h->sni, "b.test") == 0 ? ctx_b : ctx_default);
    return SSL_CLIENT_HELLO_SUCCESS;
}

static int name_cb(SSL *s, int *al, void *arg)
{
    (void)al, (void)arg;
    const char *n = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    if (n != NULL && strcmp(n, "b.test") == 0)
        switch_to(s, ctx_b);
    return SSL_TLSEXT_ERR_OK;
}

/* Counts the NewSessionTicket messages written that carry a ticket (a
 * TLS 1.2 server that declines to issue one sends an empty message). */
static void msg_cb(int write_p, int version, int type, const void *buf, size_t len, SSL *s,
                   void *arg)
{
    (void)version, (void)s;
    const unsigned char *p = buf;
    if (write_p && type == SSL3_RT_HANDSHAKE && len >= 4 && p[0] == SSL3_MT_NEWSESSION_TICKET
        && ((size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]) > 6)
        ++*(int *)arg;
}

static SSL_CTX *make_ctx(const char *cert, const char *key, const char *groups)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx
        || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1
        || SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1
        || SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"vhosts", 6) != 1
        || (groups && SSL_CTX_set1_groups_list(ctx, groups) != 1)) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    return ctx;
}

static void usage(void)
{
    fprintf(stderr, "usage: vhostserver --cert FILE --key FILE --ca FILE [--port-file FILE]\n"
            "  [--log FILE] [--max N] [--groups LIST] [--hello-switch] [--dup]\n");
    exit(2);
}

static void handle(SSL_CTX *ctx, int fd, long seq, FILE *log, int dup)
{
    struct timeval tv = { .tv_sec = 5, .tv_usec = 0 };
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n"
                               "Connection: close\r\n\r\nok\n";
    char req[4096];
    int tickets = 0;
    struct hello h = { .hellos = 0, .sni = "-" };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL *s = SSL_new(ctx);
    if (!s) {
        fprintf(log, "conn=%ld status=fail hellos=0 sni=-\n", seq);
        fflush(log);
        close(fd);
        return;
    }
    SSL_set_app_data(s, &h);
    SSL_set_msg_callback(s, msg_cb);
    SSL_set_msg_callback_arg(s, &tickets);
    SSL_set_fd(s, fd);
    if (SSL_accept(s) != 1) {
        fprintf(log, "conn=%ld status=fail hellos=%d sni=%s\n", seq, h.hellos, h.sni);
    } else {
        X509 *peer = SSL_get1_peer_certificate(s);
        fprintf(log, "conn=%ld status=ok hellos=%d sni=%s version=%s vhost=%s peercert=%d"
                " resumed=%d tickets=%d\n", seq, h.hellos, h.sni, SSL_get_version(s),
                SSL_get_SSL_CTX(s) == ctx_b ? "b.test" : "default", peer != NULL,
                SSL_session_reused(s) ? 1 : 0, tickets);
        X509_free(peer);
        if (SSL_read(s, req, sizeof req) > 0) {
            SSL_write(s, resp, (int)(sizeof resp - 1));
            SSL_shutdown(s);
        }
    }
    fflush(log);
    ERR_clear_error();
    if (dup) {
        SSL *copy = NULL;
        if (SSL_clear(s) != 1 || !(copy = SSL_dup(s)))
            fprintf(log, "conn=%ld dup=fail\n", seq);
        SSL_free(copy);
        ERR_clear_error();
    }
    SSL_free(s);
    close(fd);
}

int main(int argc, char **argv)
{
    const char *cert = NULL, *key = NULL, *ca = NULL, *port_file = NULL, *log_file = NULL;
    const char *groups = NULL;
    long max = 0;
    int dup = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--cert") && v) cert = v;
        else if (!strcmp(a, "--key") && v) key = v;
        else if (!strcmp(a, "--ca") && v) ca = v;
        else if (!strcmp(a, "--port-file") && v) port_file = v;
        else if (!strcmp(a, "--log") && v) log_file = v;
        else if (!strcmp(a, "--groups") && v) groups = v;
        else if (!strcmp(a, "--max") && v) max = atol(v);
        else {
            takes = 0;
            if (!strcmp(a, "--hello-switch")) hello_switch = 1;
            else if (!strcmp(a, "--dup")) dup = 1;
            else usage();
        }
        i += takes;
    }
    if (!cert || !key || !ca || max < 0)
        usage();
    signal(SIGPIPE, SIG_IGN);

    FILE *log = stdout;
    if (log_file && !(log = fopen(log_file, "a"))) {
        perror(log_file);
        return 1;
    }
    SSL_CTX *ctx = ctx_default = make_ctx(cert, key, groups);
    ctx_b = make_ctx(cert, key, groups);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    if (!hello_switch)
        SSL_CTX_set_tlsext_servername_callback(ctx, name_cb);
    SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);

    unsigned bound;
    int ls = listen_loopback(0, 64, port_file, &bound);
    if (ls < 0)
        return 1;

    for (long seq = 1; max == 0 || seq <= max; seq++) {
        int fd;
        while ((fd = accept(ls, NULL, NULL)) < 0)
            if (errno != EINTR)
                usleep(10000);
        handle(ctx, fd, seq, log, dup);
    }
    SSL_CTX_free(ctx);
    SSL_CTX_free(ctx_b);
    close(ls);
    if (log != stdout)
        fclose(log);
    return 0;
}
