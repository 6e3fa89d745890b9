/* Logging and the exit summary (log.h). One write(2) per line so lines
 * from threads and processes do not interleave. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int log_level = LOG_WARN;
static int log_fd = STDERR_FILENO;
static unsigned long counters[ST_COUNT];

const char *log_open(const char *path)
{
    if (path == NULL || *path == '\0')
        return NULL;
    /* A symbolic link planted under the name would have the program, root's
     * too, append to whatever it points at; opening a FIFO for writing
     * waits for a reader, which would hang the program in its first
     * OpenSSL call. Only a regular file is taken. */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                  0600);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        log_fd = fd;
        return NULL;
    }
    const char *why = fd >= 0 || errno == ENXIO ? "not a regular file"
                      : errno == ELOOP          ? "a symbolic link"
                                                : strerror(errno);
    if (fd >= 0)
        close(fd);
    return why;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char *const names[] = {"", "error", "warning", "info", "debug"};
    char line[512];
    int n = snprintf(line, sizeof line, "resumeshim[%ld]: %s: ", (long)getpid(), names[level]);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(log_fd, line, (size_t)n);
    (void)ignored;
}

void stat_add(enum counter which)
{
    __atomic_fetch_add(&counters[which], 1, __ATOMIC_RELAXED);
}

void stats_reset(void)
{
    for (int i = 0; i < ST_COUNT; i++)
        __atomic_store_n(&counters[i], 0, __ATOMIC_RELAXED);
}

void stats_print(bool server)
{
    unsigned long c[ST_COUNT];
    for (int i = 0; i < ST_COUNT; i++)
        c[i] = __atomic_load_n(&counters[i], __ATOMIC_RELAXED);
    char line[256];
    int n = snprintf(line, sizeof line,
                     "resumeshim[%ld]: handshakes=%lu offered=%lu resumed=%lu full=%lu "
                     "tickets=%lu evicted=%lu expired=%lu",
                     (long)getpid(), c[ST_HANDSHAKES], c[ST_OFFERED], c[ST_RESUMED], c[ST_FULL],
                     c[ST_TICKETS], c[ST_EVICTED], c[ST_EXPIRED]);
    /* The server mode's own, in this process (each worker prints its own). */
    if (server)
        n += snprintf(line + n, sizeof line - (size_t)n,
                      " server_tickets=%lu server_accepted=%lu server_refused=%lu",
                      c[ST_SERVER_ISSUED], c[ST_SERVER_ACCEPTED], c[ST_SERVER_REFUSED]);
    n += snprintf(line + n, sizeof line - (size_t)n, "\n");
    ssize_t ignored = write(log_fd, line, (size_t)n);
    (void)ignored;
}
