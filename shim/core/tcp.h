/* tcp: what the shim does to a program's TCP socket. */
#ifndef RESUMESHIM_TCP_H
#define RESUMESHIM_TCP_H

/* Sends what Nagle's algorithm holds on socket fd now, and leaves
 * TCP_NODELAY as it found it. */
void tcp_push(int fd);

#endif
