/* The test servers' listening socket, on 127.0.0.1 only. Shared by
 * pskserver, vhostserver and delayrelay. */
#ifndef RESUMESHIM_TESTS_LISTEN_H
#define RESUMESHIM_TESTS_LISTEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

/* Listens on PORT (0: a free one) and returns the socket; when port_file is
 * set, writes the port there through a rename, so that a test waiting for
 * the file never reads half of it. *bound gets the port. -1 on failure,
 * said on stderr. */
static int listen_loopback(unsigned port, int backlog, const char *port_file, unsigned *bound)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t salen = sizeof sa;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, backlog) < 0 ||
        getsockname(ls, (struct sockaddr *)&sa, &salen) < 0) {
        perror("listen");
        return -1;
    }
    *bound = ntohs(sa.sin_port);
    if (port_file) {
        char tmp[4096];
        FILE *f;
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        if (!(f = fopen(tmp, "w")) || fprintf(f, "%u\n", *bound) < 0 || fclose(f) != 0 ||
            rename(tmp, port_file) != 0) {
            perror(port_file);
            return -1;
        }
    }
    return ls;
}

#endif
