/* policyclient: one TLS connection, verifying the server against CA, that
 * authenticates the client by what the program alone decides:
 *   engine SO      a client-certificate ENGINE (SSL_CTX_set_client_cert_engine)
 *                  loaded from the dynamic engine at path SO (tests/ccengine.c)
 *   seccb OP PEM   the certificate and key in PEM, and a security callback
 *                  (set after them) that refuses OP and otherwise answers as
 *                  OpenSSL's own: "own" the client's own leaf key
 *                  (SSL_SECOP_EE_KEY), "sigalg" the server's signature
 *                  algorithm (SSL_SECOP_SIGALG_CHECK), "none" nothing;
 *                  "openssl" sets no callback: OpenSSL's own stays
 *   plain          none of these
 * Prints "ok=0|1 reused=..."; exits 0 when the connection carried data.
 * usage: policyclient --tls12|--tls13 PORT CA MODE [ARGS] */
/* ENGINE functions are deprecated from 3.0 on, and still there. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "connect.h"
#include "sslget.h"

static const char *refused;
static int (*openssl_cb)(const SSL *, const SSL_CTX *, int, int, int, void *, void *);

static int policy(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid, void *other, void *ex)
{
    if ((!strcmp(refused, "own") && op == SSL_SECOP_EE_KEY) ||
        (!strcmp(refused, "sigalg") && op == SSL_SECOP_SIGALG_CHECK))
        return 0;
    return openssl_cb(s, ctx, op, bits, nid, other, ex);
}

static int setup(SSL_CTX *ctx, int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[4], "plain"))
        return 1;
    if (argc == 6 && !strcmp(argv[4], "engine")) {
        ENGINE_load_dynamic();
        ENGINE *e = ENGINE_by_id("dynamic");
        return e != NULL && ENGINE_ctrl_cmd_string(e, "SO_PATH", argv[5], 0) &&
               ENGINE_ctrl_cmd_string(e, "LOAD", NULL, 0) &&
               SSL_CTX_set_client_cert_engine(ctx, e) == 1;
    }
    if (argc == 7 && !strcmp(argv[4], "seccb")) {
        if (SSL_CTX_use_certificate_chain_file(ctx, argv[6]) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, argv[6], SSL_FILETYPE_PEM) != 1)
            return 0;
        refused = argv[5];
        if (!strcmp(refused, "openssl"))
            return 1;
        openssl_cb = SSL_CTX_get_security_callback(ctx);
        SSL_CTX_set_security_callback(ctx, policy);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    int v = !strcmp(argv[1], "--tls12") ? TLS1_2_VERSION : TLS1_3_VERSION;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, v);
    SSL_CTX_set_max_proto_version(ctx, v);
    if (SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1 || !setup(ctx, argc, argv)) {
        ERR_print_errors_fp(stderr);
        return 2;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL *s = SSL_new(ctx);
    int fd = tcp(atoi(argv[2]));
    if (fd < 0)
        return 2;
    SSL_set_fd(s, fd);
    SSL_set_tlsext_host_name(s, "localhost");
    int ok = ssl_get(s);
    printf("ok=%d reused=%d\n", ok, ok ? SSL_session_reused(s) : -1);
    ERR_clear_error();
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
    SSL_CTX_free(ctx);
    return ok ? 0 : 1;
}
