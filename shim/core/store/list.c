/* The resumeshim command's list and clear (store.h). The store's files are
 * read, named and removed here, by the code that writes them, so that
 * their format is written once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store/dir.h"
#include "store/lock.h"
#include "store/names.h"

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool store_list(const char *path, char salt[HEX_LEN + 1], store_visit visit, void *arg)
{
    store_dir = strdup(path);
    int dfd = store_dir != NULL ? open_store() : -1;
    DIR *d = dfd >= 0 ? listing(dfd) : NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool ok = d != NULL;
    if (ok && !get_salt(dfd, false, salt))
        salt[0] = '\0';
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (!entry_name(e->d_name))
            continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            ok = more != NULL;
            names = more != NULL ? more : names;
        }
        if (ok && (names[n] = strdup(e->d_name)) != NULL)
            n++;
        else
            ok = false;
    }
    if (d != NULL)
        closedir(d);
    /* In name order, so that a listing reads the same twice. */
    if (ok && n > 0)
        qsort(names, n, sizeof *names, by_str);
    for (size_t i = 0; i < n; i++) {
        struct record recs[RECORDS_MAX];
        char server[HEX_LEN + 1], *buf = NULL;
        size_t len;
        off_t size;
        /* Rewritten by renames: each file read is whole without the lock. */
        int fd = ok ? open_file(dfd, names[i], O_RDONLY, &size) : -1;
        if (fd >= 0) {
            buf = read_all(fd, size, FILE_MAX, &len);
            close(fd);
        }
        int m = buf != NULL ? record_parse(buf, len, server, recs, RECORDS_MAX) : -1;
        if (m >= 0)
            visit(server, recs, m, arg);
        if (buf != NULL)
            explicit_bzero(buf, len);
        free(buf);
        free(names[i]);
    }
    free(names);
    if (dfd >= 0)
        close(dfd);
    free(store_dir);
    store_dir = NULL;
    return ok;
}

bool store_server_hash(const struct tls_ops *ops, const char salt[HEX_LEN + 1],
                       const char *server, char out[HEX_LEN + 1])
{
    return salted(ops, salt, server, strlen(server), out);
}

bool store_clear(const char *path, long wait_us)
{
    store_dir = strdup(path);
    int dfd = store_dir != NULL ? open_store() : -1;
    int lfd = dfd >= 0 ? lock_store(dfd, wait_us) : -1;
    /* The lock and the mark stay: every process of the shim goes on
     * sharing them. A directory in the way is not the store's. */
    bool ok = lfd >= 0 && remove_entries(dfd);
    ok = ok && (unlinkat(dfd, "tmp", 0) == 0 || errno == ENOENT || errno == EISDIR);
    ok = ok && (unlinkat(dfd, "salt", 0) == 0 || errno == ENOENT || errno == EISDIR);
    if (lfd >= 0)
        close(lfd);
    if (dfd >= 0)
        close(dfd);
    free(store_dir);
    store_dir = NULL;
    return ok;
}
