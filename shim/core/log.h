/* log: lines for the user and the exit summary's counters. Always to
 * stderr or a file the user named, never stdout: the host program's output
 * is not ours to touch. */
#ifndef RESUMESHIM_LOG_H
#define RESUMESHIM_LOG_H

#include <stdbool.h>

enum { LOG_OFF, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
/* Read on every LOG; written once, by set-up. */
extern int log_level;
/* Logs to the regular file at path from now on; NULL, or why it is
 * refused (logging stays on stderr). */
const char *log_open(const char *path);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define LOG(level, ...)                                                        \
    do {                                                                       \
        if (log_level >= (level))                                              \
            log_msg((level), __VA_ARGS__);                                     \
    } while (0)

enum counter {
    ST_HANDSHAKES, /* client handshakes the shim saw start */
    ST_OFFERED,    /* of those, offered a session from the pool */
    ST_RESUMED,    /* completed as a resumption */
    ST_FULL,       /* completed as a full handshake */
    ST_TICKETS,    /* sessions received from servers and kept */
    ST_EVICTED,    /* kept sessions dropped unused: pool or host limit */
    ST_EXPIRED,    /* kept sessions dropped because they had expired */
    ST_SERVER_ISSUED,   /* server mode: tickets encrypted */
    ST_SERVER_ACCEPTED, /* server mode: tickets decrypted (resumptions) */
    ST_SERVER_REFUSED,  /* server mode: tickets not ours, or too old */
    ST_COUNT
};
void stat_add(enum counter which);
/* A forked child counts its own. */
void stats_reset(void);
/* The summary line; server: with the server mode's counters. */
void stats_print(bool server);

#endif
