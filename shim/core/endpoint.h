/* endpoint: the socket under a connection whose program moves its bytes
 * itself (a BIO or transport functions of its own). */
#ifndef RESUMESHIM_ENDPOINT_H
#define RESUMESHIM_ENDPOINT_H

#include <stdbool.h>

/* The process's only connected stream socket, when it is a TCP socket
 * that has sent and received nothing yet: the one a handshake about to
 * begin must be carried by. -1 when there is none, or any doubt. */
int endpoint_fresh_socket(void);

/* A TCP socket that has sent and received nothing yet, and holds nothing
 * queued: one whose peer is the endpoint of a handshake about to begin. A
 * socket that carried bytes before the handshake may lead through a proxy
 * (HTTP CONNECT, SOCKS) to an endpoint its address does not name. */
bool endpoint_fresh(int fd);

#endif
