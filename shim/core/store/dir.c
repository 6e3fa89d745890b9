/* The store's directory (dir.h), RESUMESHIM_STORE=DIR:
 *
 * DIR/resumeshim-store
 *            the mark that DIR is the store's own: the store deletes and
 *            renames files in DIR, so it works only in a directory it made
 *            or found empty and marked, never among the user's files;
 * DIR/lock   flock(2) held around every read-modify-write, so a TLS 1.3
 *            ticket one process takes is gone for all (lock.c);
 * DIR/salt   the salt that names the entries, so no file lists a host
 *            (names.c);
 * DIR/s-HEX  one file per server and client configuration (sessions.c,
 *            in record.c's format);
 * DIR/spent  the tickets offered (spent.c);
 * DIR/t-HEX  a backend's side files (side.c);
 * DIR/tmp    the next version of an entry, renamed over it: a process killed
 *            while writing leaves the old file whole.
 *
 * Nothing is kept open between calls: a descriptor held for the program's
 * lifetime could be closed, or renumbered, by the program itself. Every
 * file is checked to be the user's alone before it is read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "store/dir.h"

char *store_dir; /* absolute; NULL: sessions stay in memory */

#define MARKER "resumeshim-store"
#define MARKER_TEXT                                                                   \
    "This directory is the store of libresumeshim (RESUMESHIM_STORE): TLS sessions\n" \
    "shared by the user's processes. Its files are secret. `resumeshim clear`\n"     \
    "empties it; removing the whole directory is safe too.\n"

enum trouble { T_ERRNO, T_PRIVATE, T_FOREIGN, T_COUNT };

/* The effective user the store is private to, read once per operation
 * (open_dir) rather than once per file. */
static uid_t euid;

/* One warning per process for each kind of trouble: a store refused once
 * is refused every time. */
static void refuse(enum trouble why, const char *what, const struct stat *st)
{
    static int warned[T_COUNT];
    if (__atomic_exchange_n(&warned[why], 1, __ATOMIC_RELAXED))
        return;
    const char *sep = what != NULL ? "/" : "", *name = what != NULL ? what : "";
    if (why == T_PRIVATE)
        LOG(LOG_WARN,
            "RESUMESHIM_STORE: %s%s%s is not private (owner uid %ld, mode %03o; want uid %ld, "
            "no access for group or others); keeping sessions in memory only",
            store_dir, sep, name, (long)st->st_uid, (unsigned)(st->st_mode & 0777), (long)euid);
    else if (why == T_FOREIGN)
        LOG(LOG_WARN, "RESUMESHIM_STORE: %s holds files and no %s file: it is not a store, "
            "and the store never touches files it did not make; keeping sessions in memory "
            "only (name a new or empty directory)", store_dir, MARKER);
    else
        LOG(LOG_WARN, "RESUMESHIM_STORE: cannot use %s%s%s (%s); sessions stay in memory "
            "while it fails", store_dir, sep, name, strerror(errno));
}

/* Not even readable by others: the entries' names and times would tell
 * them how many servers the user talks to, and when. */
static bool private_dir(const struct stat *st)
{
    return S_ISDIR(st->st_mode) && st->st_uid == euid && !(st->st_mode & 077);
}

static bool private_file(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == euid && !(st->st_mode & 077);
}

/* 1: the directory holds the store's mark; 0: no mark; -1: refused. */
static int marked(int dfd)
{
    struct stat st;
    if (fstatat(dfd, MARKER, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return 0;
        refuse(T_ERRNO, MARKER, NULL);
        return -1;
    }
    if (!private_file(&st)) {
        refuse(T_PRIVATE, MARKER, &st);
        return -1;
    }
    return 1;
}

static int open_dir(void)
{
    struct stat st;
    euid = geteuid();
    int fd = open(store_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        refuse(T_ERRNO, NULL, NULL);
        return -1;
    }
    if (fstat(fd, &st) != 0)
        refuse(T_ERRNO, NULL, NULL);
    else if (!private_dir(&st))
        refuse(T_PRIVATE, NULL, &st);
    else
        return fd;
    close(fd);
    return -1;
}

/* The store's directory, checked again for its mark before every use: it
 * may have been emptied, or replaced, since. */
int open_store(void)
{
    int fd = open_dir();
    int m = fd >= 0 ? marked(fd) : -1;
    if (m == 0)
        refuse(T_FOREIGN, NULL, NULL);
    if (m != 1 && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Opens a file of the store, refusing one that others could have written
 * or read: it holds secrets, and a planted one could hold anything. Never
 * blocking in open(): a FIFO in its place would hang the handshake. Its
 * size goes to *size when asked for. */
int open_file(int dfd, const char *name, int flags, off_t *size)
{
    struct stat st;
    int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0) {
        if (errno != ENOENT)
            refuse(T_ERRNO, name, NULL);
        return -1;
    }
    bool got = fstat(fd, &st) == 0;
    if (!got || !private_file(&st)) {
        if (got)
            refuse(T_PRIVATE, name, &st);
        else
            refuse(T_ERRNO, name, NULL);
        close(fd);
        errno = EPERM;
        return -1;
    }
    if (size != NULL)
        *size = st.st_size;
    return fd;
}

/* The file's contents, size bytes (its size when opened) at most; NULL
 * for a file larger than max. */
char *read_all(int fd, off_t size, uint64_t max, size_t *len)
{
    if (size < 0 || (uint64_t)size > max)
        return NULL;
    char *buf = malloc((size_t)size + 1);
    size_t got = 0;
    while (buf != NULL && got < (size_t)size) {
        ssize_t n = read(fd, buf + got, (size_t)size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    *len = got;
    return buf;
}

/* Writes the contents to tmp and renames it over name: 1 done, 0 failed
 * (nothing left behind), -1 tmp could not be made. */
int write_renamed(int dfd, const char *tmp, const char *name, const char *buf, size_t len)
{
    /* Made here with O_EXCL, so it is this process's own file, 0600 at
     * most. Whatever a killed process left as tmp is scratch: made anew. */
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dfd, tmp, flags, 0600);
    if (fd < 0 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)
        fd = openat(dfd, tmp, flags, 0600);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    /* A part written (a full disk) is secrets left lying about: gone
     * before the lock is let go, whatever failed. */
    bool ok = close(fd) == 0 && done == len && renameat(dfd, tmp, dfd, name) == 0;
    if (!ok)
        unlinkat(dfd, tmp, 0);
    return ok;
}

/* Replaces name with the given contents, or removes it when there are none. */
bool replace(int dfd, const char *name, const char *buf, size_t len)
{
    if (len == 0)
        return unlinkat(dfd, name, 0) == 0 || errno == ENOENT;
    int r = write_renamed(dfd, "tmp", name, buf, len);
    if (r < 0)
        refuse(T_ERRNO, "tmp", NULL);
    return r == 1;
}

/* The directory's entries, read through a descriptor of their own (which
 * shares its offset with dfd's: hence the rewind). */
DIR *listing(int dfd)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL && fd >= 0)
        close(fd);
    if (d != NULL)
        rewinddir(d);
    return d;
}

/* Drops the least recently changed files whose names are counted, oldest first,
 * while more than keep are left; returns how many went. */
long drop_oldest(int dfd, bool (*counted)(const char *name), long keep)
{
    DIR *d = listing(dfd);
    long dropped = 0;
    if (d == NULL)
        return 0;
    for (;;) {
        long count = 0;
        char oldest[NAME_MAX + 1] = "";
        struct timespec when = {0, 0};
        struct dirent *e;
        rewinddir(d);
        while ((e = readdir(d)) != NULL) {
            struct stat st;
            if (!counted(e->d_name) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            count++;
            if (oldest[0] == '\0' || st.st_mtim.tv_sec < when.tv_sec ||
                (st.st_mtim.tv_sec == when.tv_sec && st.st_mtim.tv_nsec < when.tv_nsec)) {
                when = st.st_mtim;
                snprintf(oldest, sizeof oldest, "%s", e->d_name);
            }
        }
        if (count <= keep || unlinkat(dfd, oldest, 0) != 0)
            break;
        dropped++;
    }
    closedir(d);
    return dropped;
}

bool store_on(void)
{
    return store_dir != NULL;
}

/* Whether the directory holds nothing at all. */
static bool empty_dir(int dfd)
{
    DIR *d = listing(dfd);
    if (d == NULL)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

/* Makes the directory the store's when it is empty; a directory holding
 * anything but the mark is the user's, and its files are not the store's
 * to delete or replace. Processes starting together may race here: the
 * mark is made before any other file of the store, and only once. */
static bool claim(int dfd)
{
    int m = marked(dfd);
    if (m != 0)
        return m == 1;
    if (!empty_dir(dfd)) {
        /* Another process may have marked it and begun to fill it since. */
        m = marked(dfd);
        if (m == 0)
            refuse(T_FOREIGN, NULL, NULL);
        return m == 1;
    }
    int fd = openat(dfd, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return marked(dfd) == 1;
        refuse(T_ERRNO, MARKER, NULL);
        return false;
    }
    /* The text is for a person who finds the directory; the mark is the
     * file itself, so a short write (a full disk) does not matter. */
    ssize_t ignored = write(fd, MARKER_TEXT, sizeof MARKER_TEXT - 1);
    (void)ignored;
    close(fd);
    return true;
}

/* A relative directory is taken from where the program started: it may
 * change its working directory later. */
void dir_init(const char *path)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        store_dir = strdup(path);
    else if (getcwd(cwd, sizeof cwd) != NULL &&
             (store_dir = malloc(strlen(cwd) + strlen(path) + 2)))
        sprintf(store_dir, "%s/%s", cwd, path);
    if (store_dir == NULL)
        return;
    if (mkdir(store_dir, 0700) != 0 && errno != EEXIST) {
        refuse(T_ERRNO, NULL, NULL);
        free(store_dir);
        store_dir = NULL;
        return;
    }
    int fd = open_dir();
    bool ours = fd >= 0 && claim(fd);
    if (fd >= 0)
        close(fd);
    if (!ours) {
        free(store_dir);
        store_dir = NULL;
        return;
    }
    LOG(LOG_INFO, "sessions shared through the store in %s", store_dir);
}
