/* A GnuTLS client for the edges of checking inside the handshake, which a
 * resumed GnuTLS session skips: each connection sets its check one way,
 * and a session earned under one must never let another connection pass
 * a check it would fail in a full handshake.
 *
 * usage: verifyedge PORT MODE CAFILE NAME [MODE CAFILE NAME]...
 * one connection per triple, in order, to 127.0.0.1:PORT, sending the
 * server name localhost, trusting CAFILE, checking NAME:
 *   plain      gnutls_session_set_verify_cert(NAME)
 *   cert2      gnutls_session_set_verify_cert2, a DNS_HOSTNAME of size 0
 *              (a NUL-terminated string, as GnuTLS reads it)
 *   trustlist  the CA added through the credentials' own trust list
 *              (gnutls_certificate_get_trust_list)
 *   unset      set_verify_cert(NAME), then gnutls_session_set_verify_function
 *              (NULL): nothing is checked
 *   late       set_verify_cert on a buffer holding another name, changed to
 *              NAME before the handshake (GnuTLS reads it then)
 * Prints "conn I handshake=ok|fail resumed=0|1" per connection. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connect.h"
#include "gnutlsget.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>


static void trust(gnutls_certificate_credentials_t cred, const char *mode, const char *ca)
{
    if (strcmp(mode, "trustlist") == 0) {
        gnutls_x509_trust_list_t tl;
        gnutls_certificate_get_trust_list(cred, &tl);
        gnutls_x509_trust_list_add_trust_file(tl, ca, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
    } else {
        gnutls_certificate_set_x509_trust_file(cred, ca, GNUTLS_X509_FMT_PEM);
    }
}

static void check(gnutls_session_t s, const char *mode, const char *name, char *buf, size_t size,
                  gnutls_typed_vdata_st *data)
{
    if (strcmp(mode, "cert2") == 0) {
        *data = (gnutls_typed_vdata_st){GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)name, 0};
        gnutls_session_set_verify_cert2(s, data, 1, 0);
    } else if (strcmp(mode, "late") == 0) {
        snprintf(buf, size, "%s", strcmp(name, "wrong.example") == 0 ? "localhost" : "wrong.example");
        gnutls_session_set_verify_cert(s, buf, 0);
        snprintf(buf, size, "%s", name);
    } else {
        gnutls_session_set_verify_cert(s, name, 0);
        if (strcmp(mode, "unset") == 0)
            gnutls_session_set_verify_function(s, NULL);
    }
}

static int one(int port, const char *mode, const char *ca, const char *name, int i)
{
    gnutls_certificate_credentials_t cred;
    gnutls_session_t s;
    gnutls_typed_vdata_st data;
    char buf[256];
    int fd = tcp(port), r = -1, resumed = 0;
    if (fd < 0 || gnutls_certificate_allocate_credentials(&cred) != 0)
        return -1;
    trust(cred, mode, ca);
    if (gnutls_init(&s, GNUTLS_CLIENT) == 0) {
        gnutls_set_default_priority(s);
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
        gnutls_server_name_set(s, GNUTLS_NAME_DNS, "localhost", 9);
        check(s, mode, name, buf, sizeof buf, &data);
        gnutls_transport_set_int(s, fd);
        r = gnutls_get(s, &resumed);
        gnutls_deinit(s);
    }
    close(fd);
    gnutls_certificate_free_credentials(cred);
    printf("conn %d handshake=%s resumed=%d\n", i, r == 0 ? "ok" : "fail", resumed);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (argc - 2) % 3 != 0) {
        fprintf(stderr, "usage: verifyedge PORT MODE CAFILE NAME [MODE CAFILE NAME]...\n");
        return 2;
    }
    int port = atoi(argv[1]);
    for (int i = 2; i + 2 < argc; i += 3)
        one(port, argv[i], argv[i + 1], argv[i + 2], (i + 1) / 3);
    return 0;
}
