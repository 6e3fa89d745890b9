/* A GnuTLS client that corks its socket (TCP_CORK) to send a request in
 * two writes as one segment, as programs that build a request in pieces
 * do: after the handshake it sets TCP_CORK, writes the request's first
 * line, asks the kernel how many bytes it still holds unsent
 * (SIOCOUTQNSD), writes the rest, uncorks, and reads the response.
 * Prints "unsent after the first write: N" (N > 0: the cork held the
 * record), the data segments the request left in (TCP_INFO's
 * tcpi_data_segs_out, before the first write and after the uncork) and the
 * response's status line.
 * usage: corkclient HOST PORT CAFILE [1.2|1.3]
 * Resumes, as any program, only through the shim. */
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    inet_pton(AF_INET, argv[1], &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        return 2;
    gnutls_certificate_credentials_t cred;
    gnutls_session_t s;
    gnutls_certificate_allocate_credentials(&cred);
    gnutls_certificate_set_x509_trust_file(cred, argv[3], GNUTLS_X509_FMT_PEM);
    gnutls_init(&s, GNUTLS_CLIENT);
    const char *prio = argc > 4 && strcmp(argv[4], "1.2") == 0
                           ? "NORMAL:-VERS-ALL:+VERS-TLS1.2"
                           : argc > 4 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3" : "NORMAL";
    gnutls_priority_set_direct(s, prio, NULL);
    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_session_set_verify_cert(s, argv[1], 0);
    gnutls_transport_set_int(s, fd);
    int r;
    do
        r = gnutls_handshake(s);
    while (r < 0 && !gnutls_error_is_fatal(r));
    if (r < 0) {
        printf("handshake: %s\n", gnutls_strerror(r));
        return 1;
    }
    int one = 1, zero = 0;
    setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof one);
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    unsigned segs = ti.tcpi_data_segs_out;
    const char *l1 = "GET / HTTP/1.0\r\n", *l2 = "Host: x\r\n\r\n";
    gnutls_record_send(s, l1, strlen(l1));
    int unsent = -1;
    ioctl(fd, SIOCOUTQNSD, &unsent);
    printf("unsent after the first write: %d\n", unsent);
    gnutls_record_send(s, l2, strlen(l2));
    setsockopt(fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof zero);
    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    printf("data segments the request left in: %u\n", ti.tcpi_data_segs_out - segs);
    char buf[64] = {0};
    ssize_t n = gnutls_record_recv(s, buf, 15);
    printf("response: %.*s\n", n > 0 ? (int)n : 0, buf);
    gnutls_bye(s, GNUTLS_SHUT_WR);
    close(fd);
    gnutls_deinit(s);
    gnutls_certificate_free_credentials(cred);
    return 0;
}
