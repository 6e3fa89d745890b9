/* certcbclient: two connections of a client whose certificate callback
 * chooses bob's certificate, on contexts whose fixed certificate is
 * alice's; the second has the callback, and MODE says how the first comes
 * to have none in force, or has it too:
 *   watched  SSL_set_cert_cb on both
 *   late     SSL_CTX_set_cert_cb after SSL_new of the first connection
 *   clearssl SSL_set_cert_cb(s1, cb) then SSL_set_cert_cb(s1, NULL, NULL)
 *   setctx   SSL_set_cert_cb(s1, cb) then SSL_set_SSL_CTX(s1, ctx2)
 *   setnull  SSL_set_cert_cb(s1, cb) then SSL_set_SSL_CTX(s1, NULL) (the
 *            session context: the same, yet its settings are taken again)
 *   clearctx SSL_CTX_set_cert_cb(ctxA, cb) then (ctxA, NULL, NULL); the
 *            second on ctxB, with the callback
 * refuse: the callback refuses (returns 0) instead of choosing bob.
 * Prints "first: ok=0|1 reused=..." and "second: ..."; exits 0 when the
 * second connection carried data.
 * usage: certcbclient MODE PORT CA ALICE BOB [refuse] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sslget.h"

static const char *bob;
static int refuse;

static int use_bob(SSL *s, void *arg)
{
    (void)arg;
    if (refuse)
        return 0;
    return SSL_use_certificate_chain_file(s, bob) == 1 &&
           SSL_use_PrivateKey_file(s, bob, SSL_FILETYPE_PEM) == 1;
}

static SSL_CTX *make_ctx(const char *ca, const char *alice)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_load_verify_locations(ctx, ca, NULL);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_use_certificate_chain_file(ctx, alice);
    SSL_CTX_use_PrivateKey_file(ctx, alice, SSL_FILETYPE_PEM);
    return ctx;
}

static int run(SSL *s, int port, const char *what)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        return 0;
    }
    SSL_set_fd(s, fd);
    SSL_set_tlsext_host_name(s, "localhost");
    int ok = ssl_get(s);
    printf("%s: ok=%d reused=%d\n", what, ok, ok ? SSL_session_reused(s) : -1);
    ERR_clear_error();
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    const char *mode = argv[1], *ca = argv[3], *alice = argv[4];
    int port = atoi(argv[2]);
    bob = argv[5];
    refuse = argc > 6 && strcmp(argv[6], "refuse") == 0;
    SSL_CTX *ctx = make_ctx(ca, alice), *ctx2 = NULL;
    SSL *s1 = NULL, *s2 = NULL;
    if (!strcmp(mode, "watched")) {
        s1 = SSL_new(ctx);
        SSL_set_cert_cb(s1, use_bob, NULL);
        run(s1, port, "first");
        s2 = SSL_new(ctx);
        SSL_set_cert_cb(s2, use_bob, NULL);
    } else if (!strcmp(mode, "late")) {
        s1 = SSL_new(ctx);
        SSL_CTX_set_cert_cb(ctx, use_bob, NULL);
        run(s1, port, "first");
        s2 = SSL_new(ctx);
    } else if (!strcmp(mode, "clearssl")) {
        s1 = SSL_new(ctx);
        SSL_set_cert_cb(s1, use_bob, NULL);
        SSL_set_cert_cb(s1, NULL, NULL);
        run(s1, port, "first");
        s2 = SSL_new(ctx);
        SSL_set_cert_cb(s2, use_bob, NULL);
    } else if (!strcmp(mode, "setctx")) {
        ctx2 = make_ctx(ca, alice);
        s1 = SSL_new(ctx);
        SSL_set_cert_cb(s1, use_bob, NULL);
        SSL_set_SSL_CTX(s1, ctx2);
        run(s1, port, "first");
        s2 = SSL_new(ctx);
        SSL_set_cert_cb(s2, use_bob, NULL);
    } else if (!strcmp(mode, "setnull")) {
        s1 = SSL_new(ctx);
        SSL_set_cert_cb(s1, use_bob, NULL);
        SSL_set_SSL_CTX(s1, NULL);
        run(s1, port, "first");
        s2 = SSL_new(ctx);
        SSL_set_cert_cb(s2, use_bob, NULL);
    } else if (!strcmp(mode, "clearctx")) {
        SSL_CTX_set_cert_cb(ctx, use_bob, NULL);
        SSL_CTX_set_cert_cb(ctx, NULL, NULL);
        s1 = SSL_new(ctx);
        run(s1, port, "first");
        ctx2 = make_ctx(ca, alice);
        SSL_CTX_set_cert_cb(ctx2, use_bob, NULL);
        s2 = SSL_new(ctx2);
    } else {
        return 2;
    }
    int ok = run(s2, port, "second");
    SSL_CTX_free(ctx);
    SSL_CTX_free(ctx2);
    return ok ? 0 : 1;
}
