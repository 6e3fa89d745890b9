/* tcp: what the shim does to a program's TCP socket. */
#ifndef RESUMESHIM_TCP_H
#define RESUMESHIM_TCP_H

/* Sends what Nagle's algorithm holds on socket fd now, if it is a TCP
 * socket whose TCP_NODELAY is off, and leaves the option, and errno, as it
 * found them. */
void tcp_push(int fd);

#endif
