/* A GnuTLS client that changes the system configuration GnuTLS reads and
 * the environment that named it: GnuTLS takes GNUTLS_SYSTEM_PRIORITY_FILE
 * once, when it is loaded, and reads that file again whenever a priority
 * string with a keyword (@NAME) is initialised, whatever the environment
 * says by then.
 *
 * usage: sysconfig PORT CAFILE N K 1.2|1.3 CFG [reinit]
 * N connections to 127.0.0.1:PORT in that TLS version, over one set of
 * credentials trusting CAFILE, each with its own priority string (no
 * keyword) and gnutls_session_set_verify_cert(s, "localhost", 0). Before
 * connection K it writes CFG (a keyword EXTRA, and the ULTRA verification
 * profile as the minimum), removes GNUTLS_SYSTEM_PRIORITY_FILE from its
 * environment and initialises the priority "@EXTRA", which makes GnuTLS
 * read CFG. With reinit, CFG instead marks ECDSA-SHA256 insecure for
 * certificates, and the program ends GnuTLS (gnutls_global_deinit) and
 * starts it again (gnutls_global_init, which loads CFG and applies it),
 * then removes CFG (GnuTLS keeps what it applied). Prints
 * "conn I handshake=ok|fail resumed=0|1" per connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"
#include "gnutlsget.h"

#include <gnutls/gnutls.h>

static void set(gnutls_session_t s)
{
    gnutls_session_set_verify_cert(s, "localhost", 0);
}

static int put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* GnuTLS started again over a configuration at path, gone after. */
static int restart(const char *path)
{
    if (put(path, "[overrides]\ninsecure-sig-for-cert = ECDSA-SHA256\n") != 0)
        return -1;
    gnutls_global_deinit();
    int r = gnutls_global_init();
    unlink(path);
    printf("restarted %s\n", r == 0 ? "ok" : "fail");
    return r;
}

/* The configuration at path, and a priority that makes GnuTLS read it. */
static int reconfigure(const char *path)
{
    if (put(path, "[priorities]\nEXTRA = NORMAL\n[overrides]\nmin-verification-profile = ultra\n") != 0)
        return -1;
    unsetenv("GNUTLS_SYSTEM_PRIORITY_FILE");
    gnutls_priority_t p;
    int r = gnutls_priority_init(&p, "@EXTRA", NULL);
    if (r == 0)
        gnutls_priority_deinit(p);
    printf("@EXTRA %s\n", r == 0 ? "resolved" : "unresolved");
    return r;
}

int main(int argc, char **argv)
{
    gnutls_certificate_credentials_t cred;
    if (argc != 7 && !(argc == 8 && !strcmp(argv[7], "reinit"))) {
        fprintf(stderr, "usage: sysconfig PORT CAFILE N K 1.2|1.3 CFG [reinit]\n");
        return 2;
    }
    const char *prio = !strcmp(argv[5], "1.2") ? "NORMAL:-VERS-ALL:+VERS-TLS1.2"
                                               : "NORMAL:-VERS-ALL:+VERS-TLS1.3";
    int port = atoi(argv[1]), n = atoi(argv[3]), k = atoi(argv[4]), failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gnutls_certificate_allocate_credentials(&cred) != 0 ||
        gnutls_certificate_set_x509_trust_file(cred, argv[2], GNUTLS_X509_FMT_PEM) <= 0)
        return 2;
    for (int i = 0; i < n; i++) {
        if (i == k && (argc == 8 ? restart(argv[6]) : reconfigure(argv[6])) != 0)
            return 2;
        failed += gnutls_conn(port, i, cred, prio, set) != 0;
    }
    gnutls_certificate_free_credentials(cred);
    return failed != 0;
}
