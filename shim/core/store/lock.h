/* The store's lock (lock.c): one operation on the store at a time in a
 * process, and one across the user's processes for every read-modify-write.
 * op_open or op_begin, then op_end either way. */
#ifndef RESUMESHIM_STORE_LOCK_H
#define RESUMESHIM_STORE_LOCK_H

#include <stdbool.h>

/* One operation on the store: its directory and, while held, its lock. */
struct op {
    int dfd, lfd;
    bool held; /* op_lock */
};

/* The process's mutex in the fork registry (store_init). */
void lock_init(void);
/* DIR/lock taken, waiting up to wait_us: its descriptor (closing it lets
 * go), or -1, and then the store is left alone for a while. */
int lock_store(int dfd, long wait_us);
/* Opens the store without its lock: for files replaced only by rename,
 * which a reader finds whole, old or new. */
bool op_open(struct op *op);
/* Opens the store and takes its lock. */
bool op_begin(struct op *op);
void op_end(struct op *op);

#endif
