/* srpclient: one TLS 1.2 connection that authenticates with SRP, as user
 * USER with password PASS, and no session handling of its own. Prints
 * "ok=0|1 reused=..."; exits 0 when the connection carried data.
 * usage: srpclient PORT USER PASS */
/* SRP's functions are deprecated from 3.0 on, and still there. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include "connect.h"
#include "sslget.h"

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_cipher_list(ctx, "SRP:@SECLEVEL=0");
    if (SSL_CTX_set_srp_username(ctx, argv[2]) != 1 || SSL_CTX_set_srp_password(ctx, argv[3]) != 1)
        return 2;
    SSL *s = SSL_new(ctx);
    int fd = tcp(atoi(argv[1]));
    if (fd < 0)
        return 2;
    SSL_set_fd(s, fd);
    int ok = ssl_get(s);
    printf("ok=%d reused=%d\n", ok, ok ? SSL_session_reused(s) : -1);
    ERR_clear_error();
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
    SSL_CTX_free(ctx);
    return ok ? 0 : 1;
}
