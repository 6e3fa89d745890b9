/* A program whose own code runs inside every verification without being a
 * verify callback, a store function or a lookup method: it replaces the
 * "SSL server" purpose's check (X509_PURPOSE_add, the same id), which logs
 * the time of each check with localtime() and then runs libcrypto's check.
 * After its first connection the program changes its zone (setenv TZ,
 * no tzset, as programs do); localtime() reads the zone again, gmtime_r
 * does not, so inside the next verification the checks made before the
 * purpose check (the issuer search) read the moment in the old zone and
 * those after it (the chain's own times) in the new one.
 *   tzpurpose PORT CA CHECKTIME NEWTZ [N]
 * N connections (default 2) in one context, verifying the server as at
 * CHECKTIME (X509_VERIFY_PARAM_set_time, from the first connection). Prints
 * one line per connection (ok, resumed, verify result) and exits 1 when
 * any failed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "connect.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static int (*orig)(const X509_PURPOSE *, const X509 *, int);
static int checks;

static int logged_check(const X509_PURPOSE *p, const X509 *x, int ca)
{
    time_t now = time(NULL);
    struct tm *tm = localtime(&now);
    if (tm != NULL)
        checks++;
    return orig(p, x, ca);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    int port = atoi(argv[1]), n = argc > 5 ? atoi(argv[5]) : 2, failed = 0;
    time_t at = (time_t)strtoll(argv[3], NULL, 10);
    int i = X509_PURPOSE_get_by_id(X509_PURPOSE_SSL_SERVER);
    X509_PURPOSE *p = i >= 0 ? X509_PURPOSE_get0(i) : NULL;
    if (p == NULL)
        return 2;
    orig = p->check_purpose;
    if (X509_PURPOSE_add(X509_PURPOSE_SSL_SERVER, p->trust, 0, logged_check,
                         X509_PURPOSE_get0_name(p), X509_PURPOSE_get0_sname(p), NULL) != 1)
        return 2;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || SSL_CTX_load_verify_locations(ctx, argv[2], NULL) != 1)
        return 2;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    X509_VERIFY_PARAM_set_time(SSL_CTX_get0_param(ctx), at);
    for (int c = 0; c < n; c++) {
        if (c == 1)
            setenv("TZ", argv[4], 1);
        int fd = tcp(port);
        if (fd < 0)
            return 2;
        SSL *s = SSL_new(ctx);
        SSL_set_fd(s, fd);
        SSL_set_tlsext_host_name(s, "localhost");
        SSL_set1_host(s, "localhost");
        int ok = SSL_connect(s) == 1;
        if (ok) {
            char buf[1];
            SSL_write(s, "x", 1);
            SSL_read(s, buf, 1); /* tickets */
        }
        printf("conn=%d ok=%d resumed=%d verify=%ld\n", c + 1, ok, ok && SSL_session_reused(s),
               SSL_get_verify_result(s));
        failed += !ok;
        if (ok)
            SSL_shutdown(s);
        SSL_free(s);
        close(fd);
    }
    printf("checks=%d failed=%d\n", checks, failed);
    SSL_CTX_free(ctx);
    return failed != 0;
}
