/* A client whose current certificate slot is half filled: a certificate
 * without its key (as Tcl's tls package leaves its context), alone or
 * beside a complete slot (an RSA certificate and key). It connects to
 * 127.0.0.1:PORT N times, one connection each, and prints per connection
 * whether it worked, was resumed, and whether the half slot is still the
 * current one after the handshake (the shim must not move it).
 * usage: halfslot PORT N CERT [RSACERT RSAKEY] */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "connect.h"
#include "sslget.h"

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6)
        return 2;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (argc == 6 && (SSL_CTX_use_certificate_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1 ||
                      SSL_CTX_use_PrivateKey_file(ctx, argv[5], SSL_FILETYPE_PEM) != 1))
        return 2;
    if (SSL_CTX_use_certificate_file(ctx, argv[3], SSL_FILETYPE_PEM) != 1)
        return 2;
    X509 *half = SSL_CTX_get0_certificate(ctx);
    for (int i = 0; i < atoi(argv[2]); i++) {
        SSL *s = SSL_new(ctx);
        int fd = tcp(atoi(argv[1]));
        if (fd < 0)
            return 2;
        SSL_set_fd(s, fd);
        int ok = ssl_get(s);
        printf("ok=%d reused=%d current=%s\n", ok, ok ? SSL_session_reused(s) : -1,
               SSL_get_certificate(s) == half ? "half" : "moved");
        ERR_clear_error();
        SSL_shutdown(s);
        SSL_free(s);
        close(fd);
    }
    SSL_CTX_free(ctx);
    return 0;
}
