/* config: the RESUMESHIM_* variables, read once by set-up and passed to the
 * rooms that need them; no room reads the environment or a global of
 * settings on its own. Strict parsing; a bad value costs one warning
 * naming the variable and the value used instead, never the program. */
#ifndef RESUMESHIM_CONFIG_H
#define RESUMESHIM_CONFIG_H

#include <stdbool.h>

#define POOL_MAX 64                 /* the largest RESUMESHIM_POOL_SIZE, and pool.c's growth */
#define MAX_LIFETIME (7 * 24 * 3600) /* no session is kept longer (RFC 8446) */

struct config {
    int pool_size;       /* TLS 1.3 tickets kept per server, until bursts show more */
    long max_age;        /* seconds from the verifying full handshake */
    long max_hosts;      /* servers kept, least recently used evicted */
    bool disable;
    bool stats;
    int log_level;
    const char *store; /* RESUMESHIM_STORE, or NULL */
    bool server;       /* RESUMESHIM_SERVER: shared ticket keys for servers */
    long rotate;       /* RESUMESHIM_TICKET_KEY_ROTATE, seconds */
};

/* Reads the variables (once a process; later calls return the same) and
 * sets the log's destination and level first, so that warnings about the
 * others go where the user asked. */
const struct config *config_load(void);

#endif
