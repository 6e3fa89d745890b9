/* A resumed TLS 1.2 handshake ends with the client's Finished; a request
 * written right after it waits for the server's delayed ACK when Nagle's
 * algorithm is on (measured: 392 -> 23 connections/s). Resumption must not
 * make a program slower, yet the socket's options are the program's, and
 * it may set them at any moment, from a callback inside the handshake too:
 * no value the shim could restore later is sure to be the program's. So
 * the option is switched on and off again at once, right after the first
 * write: Linux sends the queued segments as TCP_NODELAY goes on
 * (__tcp_sock_set_nodelay calls tcp_push_pending_frames, net/ipv4/tcp.c),
 * and switching it off keeps nothing else. A socket the program set
 * TCP_NODELAY on has nothing held; it is left alone. So is a corked one
 * (TCP_CORK): the program holds its data on purpose, and TCP_NODELAY going
 * on would send it anyway (tcp(7)). TCP_NODELAY is asked first: most
 * programs that care set it, and for them one call decides; on a socket
 * of another kind it fails. */
#include "tcp.h"

#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "log.h"

/* An IPv4 or IPv6 TCP socket: the only kind Nagle's algorithm holds
 * segments on, and the only kind whose option is the shim's business. */
static bool is_tcp(int fd)
{
    int v = 0;
    socklen_t len = sizeof v;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) != 0 || v != IPPROTO_TCP)
        return false;
    len = sizeof v;
    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 &&
           (v == AF_INET || v == AF_INET6);
}

static bool option_off(int fd, int name)
{
    int on = 1;
    socklen_t len = sizeof on;
    return getsockopt(fd, IPPROTO_TCP, name, &on, &len) == 0 && !on;
}

void tcp_push(int fd)
{
    int one = 1, zero = 0, saved = errno;
    if (fd >= 0 && option_off(fd, TCP_NODELAY) && is_tcp(fd) && option_off(fd, TCP_CORK) &&
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0 &&
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof zero) != 0)
        LOG(LOG_INFO, "TCP_NODELAY could not be turned off again after a push");
    errno = saved;
}
