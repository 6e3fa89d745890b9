/* The store's directory (dir.c): the user's own, private and marked as the
 * store's, and its files opened, read and replaced there safely. Each
 * operation opens it anew (open_store); a file refused, or a directory,
 * costs one warning per process and the store. The other files of this
 * room hold it through these calls. */
#ifndef RESUMESHIM_STORE_DIR_H
#define RESUMESHIM_STORE_DIR_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/record.h"

/* The largest entry, or file of secrets, read whole. */
#define FILE_MAX (RECORDS_MAX * RECORD_MAX_LINE + 256)

/* Absolute; NULL: the store is off. The command's list and clear set it
 * for the one call. */
extern char *store_dir;

/* Makes path (relative: to the working directory) the store's, or leaves
 * the store off. */
void dir_init(const char *path);
/* The directory, checked again for its mark; -1: refused. */
int open_store(void);
/* A file of the store, the user's alone and not a FIFO; its size to *size
 * when asked for. -1: missing (ENOENT) or refused. */
int open_file(int dfd, const char *name, int flags, off_t *size);
/* The file's contents, size bytes at most; NULL for one larger than max. */
char *read_all(int fd, off_t size, uint64_t max, size_t *len);
/* Writes tmp and renames it over name: 1 done, 0 failed (nothing left
 * behind), -1 tmp could not be made. */
int write_renamed(int dfd, const char *tmp, const char *name, const char *buf, size_t len);
/* Replaces name (through DIR/tmp, the lock held), or removes it for len 0. */
bool replace(int dfd, const char *name, const char *buf, size_t len);
/* The directory's entries, through a descriptor of their own. */
DIR *listing(int dfd);
/* Drops the least recently changed files whose names are counted, oldest
 * first, while more than keep are left; how many went. */
long drop_oldest(int dfd, bool (*counted)(const char *name), long keep);

#endif
