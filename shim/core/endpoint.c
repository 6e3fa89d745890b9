/* curl since 7.88 moves its TLS bytes through a BIO of its own, whose
 * socket OpenSSL cannot name (SSL_get_fd is -1: the BIO is not a
 * descriptor BIO, and it has no next BIO); so do Python's asyncio (memory
 * BIOs) and libcurl-gnutls (transport functions). Keyed by the server's
 * name alone, a session earned on one port was offered to another port of
 * the same name, where a server sharing the ticket keys accepted it.
 *
 * The socket is found where no doubt remains: as the handshake begins, no
 * byte has moved, so the socket that will carry it has sent and received
 * nothing; if it is the process's only connected stream socket, it is the
 * one. Anything else (a second connected socket, TCP or named UNIX, which
 * might carry this handshake through a tunnel; one that already carried
 * bytes, as a proxy's does; too many descriptors to look at; no /proc)
 * leaves the connection without an endpoint, and the shim offers and keeps
 * nothing for it. A socketpair's end (an event loop's wake-up) names no
 * endpoint and is passed over. Linux's tcp_info carries
 * tcpi_bytes_sent since 4.19; an older kernel gives a shorter one, and no
 * socket is fresh there. The look costs a one-shot curl run about 21,000
 * instructions of 35 million (callgrind, curl 7.88 resumed). */
#include "endpoint.h"

#include <dirent.h>
#include <stdbool.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Descriptors looked at, at most: a process with more is not one whose
 * socket can be told this way at a reasonable cost. */
#define MAX_FDS 256

/* Bytes written and not yet acknowledged count as carried, sent or not:
 * SIOCOUTQ (write_seq - snd_una). tcp_info's tcpi_notsent_bytes (write_seq
 * - snd_nxt) would save this call but misses bytes put in flight without
 * a transmission, which tcpi_bytes_sent does not count either: a send
 * queue restored in TCP repair mode (CRIU), 5 such bytes read sent 0,
 * unsent 0, SIOCOUTQ 5 (Linux 6.18). */
bool endpoint_fresh(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    int queued = -1;
    return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
           len >= offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof ti.tcpi_bytes_sent &&
           ti.tcpi_state == 1 /* TCP_ESTABLISHED */ && ti.tcpi_bytes_sent == 0 &&
           ti.tcpi_bytes_received == 0 && ioctl(fd, SIOCOUTQ, &queued) == 0 && queued == 0;
}

/* 1: a connected stream socket with a peer that has a name; 0: anything
 * else. */
static int connected(int fd, int *family)
{
    int type = 0;
    socklen_t len = sizeof type;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
        getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    *family = ss.ss_family;
    if (ss.ss_family == AF_UNIX)
        return sl > offsetof(struct sockaddr_un, sun_path);
    return ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
}

int endpoint_fresh_socket(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int own = dirfd(d), found = -1, family = 0, seen = 0;
    bool doubt = false;
    struct dirent *e;
    while (!doubt && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int fd = atoi(e->d_name);
        if (fd == own)
            continue;
        if (++seen > MAX_FDS) {
            doubt = true;
        } else if (connected(fd, &family)) {
            doubt = found >= 0 || family == AF_UNIX;
            found = fd;
        }
    }
    closedir(d);
    if (doubt || found < 0 || !endpoint_fresh(found))
        return -1;
    return found;
}
