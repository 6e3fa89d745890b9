/* A GnuTLS client whose check names the server by typed data with a size:
 * GnuTLS checks the NUL-terminated string the data point to, whatever the
 * size says (gnutls_x509_trust_list_verify_crt2), so a name buffer
 * rewritten in place, its size left as it was, is checked as it reads now.
 *
 * usage: sizedname PORT CAFILE N K 1.2|1.3 [callback]
 * N connections to 127.0.0.1:PORT in that TLS version, over one set of
 * credentials trusting
 * CAFILE, each checked by gnutls_session_set_verify_cert2 with a
 * GNUTLS_DT_DNS_HOSTNAME of size 9 pointing at a buffer that holds
 * "localhost" before connection K and "localhostx" from it on; with
 * "callback", by the credentials' verify function calling
 * gnutls_certificate_verify_peers with those data instead (data no
 * session key can see).
 * Prints "conn I handshake=ok|fail resumed=0|1" per connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "gnutlsget.h"

#include <gnutls/gnutls.h>

static char name[32] = "localhost";
static int by_callback;

static int check(gnutls_session_t s)
{
    gnutls_typed_vdata_st data = {GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)name, 9};
    unsigned status = 0;
    int r = gnutls_certificate_verify_peers(s, &data, 1, &status);
    return r == 0 && status == 0 ? 0 : GNUTLS_E_CERTIFICATE_ERROR;
}

/* Its size stays 9 whatever the buffer holds. */
static gnutls_typed_vdata_st data = {GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)name, 9};

static void set(gnutls_session_t s)
{
    if (!by_callback)
        gnutls_session_set_verify_cert2(s, &data, 1, 0);
}

int main(int argc, char **argv)
{
    gnutls_certificate_credentials_t cred;
    if (argc != 6 && !(argc == 7 && !strcmp(argv[6], "callback"))) {
        fprintf(stderr, "usage: sizedname PORT CAFILE N K 1.2|1.3 [callback]\n");
        return 2;
    }
    by_callback = argc == 7;
    const char *prio = !strcmp(argv[5], "1.2") ? "NORMAL:-VERS-ALL:+VERS-TLS1.2"
                                               : "NORMAL:-VERS-ALL:+VERS-TLS1.3";
    int port = atoi(argv[1]), n = atoi(argv[3]), k = atoi(argv[4]), failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gnutls_certificate_allocate_credentials(&cred) != 0 ||
        gnutls_certificate_set_x509_trust_file(cred, argv[2], GNUTLS_X509_FMT_PEM) <= 0)
        return 2;
    if (by_callback)
        gnutls_certificate_set_verify_function(cred, check);
    for (int i = 0; i < n; i++) {
        if (i == k)
            strcpy(name, "localhostx");
        failed += gnutls_conn(port, i, cred, prio, set) != 0;
    }
    gnutls_certificate_free_credentials(cred);
    return failed != 0;
}
