/*
 * policyserver: two listeners in one process whose client-certificate
 * policies differ only where the shim cannot look: inside a callback.
 *
 * Both contexts have the same certificate, CA, session id context and
 * verify mode (a client certificate is required) and the same callback
 * function. The first port is lenient (any certificate the CA signed), the
 * second strict (only CN=admin). Where the policy lives (--policy):
 *   arg      a cert-verify callback whose argument holds the policy
 *   appdata  the same callback with no argument; the policy is the
 *            context's app data
 *   verify   a verify callback (SSL_CTX_set_verify) that reads the
 *            context's app data
 *   narrow   a certificate callback (SSL_CTX_set_cert_cb, run in full
 *            handshakes only) that gives the strict listener's connections
 *            that verify callback, leaving context and verify mode as they
 *            are
 *   revoke   the strict context's trust store checks revocation with a
 *            function of its own (X509_STORE_set_check_revocation) that
 *            revokes every client but admin
 * Or (--switch name|hello|cert) the policies live in host contexts: each
 * listener's starting context asks for no certificate and has the same
 * name callback (name), ClientHello callback (hello) or certificate
 * callback (cert, which OpenSSL runs in full handshakes only), which moves a
 * connection that sends a server name to the listener's host context
 * (SSL_set_SSL_CTX, then SSL_set_verify with the host's mode, as nginx
 * does): the first listener's host takes any client of the CA of --ca,
 * the second's only clients of --ca2. With --shared both listeners use
 * one starting context, whose callback picks the host by the local port.
 * One line per connection, on the log:
 *   port=P status=ok|fail version=V resumed=0|1 cn=NAME|-
 * Single-threaded; listens on 127.0.0.1 only; writes both ports, one per
 * line, to the port file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "listen.h"

enum { LENIENT, STRICT };
static const int policies[2] = {LENIENT, STRICT};

/* Whether the policy admits the leaf certificate. */
static int admits(int policy, X509 *leaf)
{
    char cn[64] = "";
    if (leaf == NULL)
        return 0;
    X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof cn);
    return policy == LENIENT || strcmp(cn, "admin") == 0;
}

/* --switch: the host context of each listener, and its port. */
static SSL_CTX *hosts[2];
static unsigned port[2];
static int shared;

static SSL_CTX *host_of(SSL *s)
{
    if (shared) {
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        if (getsockname(SSL_get_fd(s), (struct sockaddr *)&sa, &len) != 0)
            return NULL;
        return hosts[ntohs(sa.sin_port) == port[1]];
    }
    return hosts[*(const int *)SSL_CTX_get_app_data(SSL_get_SSL_CTX(s))];
}

static void switch_host(SSL *s)
{
    SSL_CTX *host = host_of(s);
    if (host != NULL && SSL_get_SSL_CTX(s) != host) {
        SSL_set_SSL_CTX(s, host);
        SSL_set_verify(s, SSL_CTX_get_verify_mode(host), NULL);
    }
}

static int name_cb(SSL *s, int *al, void *arg)
{
    (void)al, (void)arg;
    if (SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) != NULL)
        switch_host(s);
    return SSL_TLSEXT_ERR_OK;
}

static int hello_cb(SSL *s, int *al, void *arg)
{
    (void)al, (void)arg;
    const unsigned char *p;
    size_t len;
    if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &p, &len) == 1)
        switch_host(s);
    return SSL_CLIENT_HELLO_SUCCESS;
}

static int cert_cb(SSL *s, void *arg)
{
    (void)arg;
    if (SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) != NULL)
        switch_host(s);
    return 1;
}

static int policy_of(X509_STORE_CTX *store)
{
    SSL *s = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    const int *p = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    return *p;
}

static int cert_verify_arg(X509_STORE_CTX *store, void *arg)
{
    return X509_verify_cert(store) == 1 &&
           admits(*(const int *)arg, X509_STORE_CTX_get0_cert(store));
}

static int cert_verify_appdata(X509_STORE_CTX *store, void *arg)
{
    (void)arg;
    return X509_verify_cert(store) == 1 &&
           admits(policy_of(store), X509_STORE_CTX_get0_cert(store));
}

static int verify_appdata(int ok, X509_STORE_CTX *store)
{
    if (!ok || X509_STORE_CTX_get_error_depth(store) != 0)
        return ok;
    return admits(policy_of(store), X509_STORE_CTX_get_current_cert(store));
}

static int narrow_cb(SSL *s, void *arg)
{
    (void)arg;
    if (*(const int *)SSL_CTX_get_app_data(SSL_get_SSL_CTX(s)) == STRICT)
        SSL_set_verify(s, SSL_get_verify_mode(s), verify_appdata);
    return 1;
}

static int revoke_guests(X509_STORE_CTX *store)
{
    if (admits(STRICT, X509_STORE_CTX_get0_cert(store)))
        return 1;
    X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REVOKED);
    return 0;
}

static SSL_CTX *make_ctx(const char *cert, const char *key, const char *ca, int version,
                         const char *where, const int *policy)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
        (ca != NULL && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    if (version) {
        SSL_CTX_set_min_proto_version(ctx, version);
        SSL_CTX_set_max_proto_version(ctx, version);
    }
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"policy", 6);
    SSL_CTX_set_app_data(ctx, (void *)policy);
    int mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    if (!strcmp(where, "name")) {
        SSL_CTX_set_tlsext_servername_callback(ctx, name_cb);
    } else if (!strcmp(where, "hello")) {
        SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);
    } else if (!strcmp(where, "cert")) {
        SSL_CTX_set_cert_cb(ctx, cert_cb, NULL);
    } else if (!strcmp(where, "host")) {
        SSL_CTX_set_verify(ctx, mode, NULL);
    } else if (!strcmp(where, "verify")) {
        SSL_CTX_set_verify(ctx, mode, verify_appdata);
    } else if (!strcmp(where, "narrow")) {
        SSL_CTX_set_verify(ctx, mode, NULL);
        SSL_CTX_set_cert_cb(ctx, narrow_cb, NULL);
    } else if (!strcmp(where, "revoke")) {
        SSL_CTX_set_verify(ctx, mode, NULL);
        if (*policy == STRICT)
            X509_STORE_set_check_revocation(SSL_CTX_get_cert_store(ctx), revoke_guests);
    } else {
        SSL_CTX_set_verify(ctx, mode, NULL);
        if (!strcmp(where, "arg"))
            SSL_CTX_set_cert_verify_callback(ctx, cert_verify_arg, (void *)policy);
        else
            SSL_CTX_set_cert_verify_callback(ctx, cert_verify_appdata, NULL);
    }
    return ctx;
}

static void handle(SSL_CTX *ctx, int fd, unsigned port, FILE *log)
{
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
    struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
    char req[4096], cn[64] = "-";
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL *s = SSL_new(ctx);
    SSL_set_fd(s, fd);
    if (SSL_accept(s) != 1) {
        fprintf(log, "port=%u status=fail\n", port);
    } else {
        X509 *peer = SSL_get0_peer_certificate(s);
        if (peer != NULL)
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn,
                                      sizeof cn);
        fprintf(log, "port=%u status=ok version=%s resumed=%d cn=%s\n", port,
                SSL_get_version(s), SSL_session_reused(s) ? 1 : 0, cn);
        fflush(log);
        if (SSL_read(s, req, sizeof req) > 0) {
            SSL_write(s, resp, (int)sizeof resp - 1);
            SSL_shutdown(s);
        }
    }
    fflush(log);
    ERR_clear_error();
    SSL_free(s);
    close(fd);
}

int main(int argc, char **argv)
{
    const char *cert = NULL, *key = NULL, *ca = NULL, *port_file = NULL, *log_file = NULL;
    const char *where = "arg", *sw = NULL, *ca2 = NULL;
    int version = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tls12")) version = TLS1_2_VERSION;
        else if (!strcmp(a, "--tls13")) version = TLS1_3_VERSION;
        else if (!strcmp(a, "--shared")) shared = 1;
        else if (v == NULL) break;
        else if (!strcmp(a, "--cert")) cert = argv[++i];
        else if (!strcmp(a, "--key")) key = argv[++i];
        else if (!strcmp(a, "--ca")) ca = argv[++i];
        else if (!strcmp(a, "--port-file")) port_file = argv[++i];
        else if (!strcmp(a, "--log")) log_file = argv[++i];
        else if (!strcmp(a, "--policy")) where = argv[++i];
        else if (!strcmp(a, "--switch")) sw = argv[++i];
        else if (!strcmp(a, "--ca2")) ca2 = argv[++i];
        else break;
    }
    if (!cert || !key || !ca || !port_file || !log_file ||
        (strcmp(where, "arg") && strcmp(where, "appdata") && strcmp(where, "verify") &&
         strcmp(where, "narrow") && strcmp(where, "revoke")) ||
        (sw != NULL && ((strcmp(sw, "name") && strcmp(sw, "hello") && strcmp(sw, "cert")) || ca2 == NULL))) {
        fprintf(stderr, "usage: policyserver --cert F --key F --ca F --port-file F --log F\n"
                        "  [--policy arg|appdata|verify|narrow|revoke] [--tls12|--tls13]\n"
                        "  [--switch name|hello|cert --ca2 F [--shared]]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    FILE *log = fopen(log_file, "a");
    if (log == NULL) {
        perror(log_file);
        return 1;
    }
    SSL_CTX *ctx[2];
    struct pollfd pfd[2];
    for (int i = 0; i < 2; i++) {
        if (sw != NULL) {
            hosts[i] = make_ctx(cert, key, i == 0 ? ca : ca2, version, "host", &policies[i]);
            ctx[i] = shared && i == 1 ? ctx[0]
                                      : make_ctx(cert, key, NULL, version, sw, &policies[i]);
        } else {
            ctx[i] = make_ctx(cert, key, ca, version, where, &policies[i]);
        }
        pfd[i] = (struct pollfd){.fd = listen_loopback(0, 64, NULL, &port[i]), .events = POLLIN};
        if (pfd[i].fd < 0)
            return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *pf = fopen(tmp, "w");
    if (pf == NULL || fprintf(pf, "%u\n%u\n", port[0], port[1]) < 0 || fclose(pf) != 0 ||
        rename(tmp, port_file) != 0) {
        perror(port_file);
        return 1;
    }
    for (;;) {
        if (poll(pfd, 2, -1) < 0 && errno != EINTR)
            return 1;
        for (int i = 0; i < 2; i++) {
            int fd = (pfd[i].revents & POLLIN) ? accept(pfd[i].fd, NULL, NULL) : -1;
            if (fd >= 0)
                handle(ctx[i], fd, port[i], log);
        }
    }
}
