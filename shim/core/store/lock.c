/* The store's lock (lock.h): DIR/lock's flock, waited for a bounded time;
 * past it the connection simply does a full handshake. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "log.h"
#include "store/dir.h"
#include "store/lock.h"

#define LOCK_WAIT_US 250000

/* A store another process keeps locked past the wait is left alone for a
 * while, so that a stuck holder costs each program one wait, not one per
 * connection. */
#define BUSY_PAUSE 10
static time_t busy_until;

int lock_store(int dfd, long wait_us)
{
    int fd = open_file(dfd, "lock", O_RDWR | O_CREAT, NULL);
    long waited = 0, pause = 20;
    while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= wait_us) {
            LOG(LOG_INFO, "store busy; going on without it for %d s", BUSY_PAUSE);
            __atomic_store_n(&busy_until, time(NULL) + BUSY_PAUSE, __ATOMIC_RELAXED);
            close(fd);
            return -1;
        }
        struct timespec ts = {0, pause * 1000};
        nanosleep(&ts, NULL);
        waited += pause;
        pause = pause < 2000 ? pause * 2 : pause;
    }
    return fd;
}

/* Held from opening the store to closing it again, and by the fork
 * handlers: a child must not inherit the descriptor that holds the flock
 * (the lock belongs to the open file, and would stay held as long as the
 * child lives). Threads wait on the flock anyway. */
static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;

void lock_init(void)
{
    fork_guard(&op_lock);
}

/* Opens the store without its lock: for files replaced only by rename,
 * which a reader finds whole, old or new. */
bool op_open(struct op *op)
{
    *op = (struct op){-1, -1, false};
    if (store_dir == NULL || time(NULL) < __atomic_load_n(&busy_until, __ATOMIC_RELAXED))
        return false;
    pthread_mutex_lock(&op_lock);
    op->held = true;
    op->dfd = open_store();
    return op->dfd >= 0;
}

/* Opens the store and takes its lock; op_end must follow either way. */
bool op_begin(struct op *op)
{
    if (!op_open(op))
        return false;
    op->lfd = lock_store(op->dfd, LOCK_WAIT_US);
    return op->lfd >= 0;
}

void op_end(struct op *op)
{
    if (op->lfd >= 0)
        close(op->lfd);
    if (op->dfd >= 0)
        close(op->dfd);
    if (op->held)
        pthread_mutex_unlock(&op_lock);
    *op = (struct op){-1, -1, false};
}
