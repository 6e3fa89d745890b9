/* Files of the store beside the entries (store.h): the server mode's
 * ticket keys, rewritten under the lock, and the backends' side files
 * ("t-" and hex digits), each written whole by a rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store/dir.h"
#include "store/lock.h"
#include "util.h"

/* A file of the store that holds secrets of its own (the server mode's
 * ticket keys), read and rewritten under the lock. update is given its
 * contents (NULL, 0 when there is none) and writes the new ones to out,
 * which has room for max bytes (none: the file is removed), or returns
 * false to leave it as it is. Every copy is wiped after use. */
bool store_rewrite(const char *name, size_t max, store_update update, void *arg)
{
    int saved = errno;
    struct op op;
    bool ok = false;
    if (op_begin(&op)) {
        size_t len = 0, out_len = 0;
        char *in = NULL, *out = malloc(max);
        off_t size;
        int fd = open_file(op.dfd, name, O_RDONLY, &size);
        bool readable = fd >= 0 || errno == ENOENT;
        if (fd >= 0) {
            in = read_all(fd, size, FILE_MAX, &len);
            readable = in != NULL;
            close(fd);
        }
        if (readable && out != NULL && update(in, len, out, &out_len, arg))
            ok = (in != NULL && out_len == len && memcmp(in, out, len) == 0) ||
                 replace(op.dfd, name, out, out_len);
        if (in != NULL)
            explicit_bzero(in, len);
        if (out != NULL)
            explicit_bzero(out, max);
        free(in);
        free(out);
    }
    op_end(&op);
    errno = saved;
    return ok;
}

/* The backends' own files beside the entries: "t-" and hex digits (an
 * OpenSSL trust file's index, with the file's content). Bounded in size
 * and number: the oldest go first. */
#define SIDE_MAX (16u << 20)
#define SIDE_KEPT 8

static bool side_name(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "t-", 2) == 0 && n > 2 && n <= 2 + HEX_LEN && is_hex(name + 2, n - 2);
}

bool store_side_read(const char *name, char **buf, size_t *len)
{
    int saved = errno;
    struct op op = {-1, -1, false};
    bool ok = false;
    if (side_name(name) && op_open(&op)) {
        off_t size;
        int fd = open_file(op.dfd, name, O_RDONLY, &size);
        size_t got = 0;
        char *b = fd >= 0 && size > 0 ? read_all(fd, size, SIDE_MAX, &got) : NULL;
        if (b != NULL && got == (size_t)size) {
            *buf = b;
            *len = got;
            ok = true;
        } else {
            free(b);
        }
        if (fd >= 0)
            close(fd);
    }
    op_end(&op);
    errno = saved;
    return ok;
}

/* Under the lock: the oldest side files beyond SIDE_KEPT go. */
static void prune_side(int dfd)
{
    drop_oldest(dfd, side_name, SIDE_KEPT);
}

bool store_side_write(const char *name, const char *buf, size_t len)
{
    int saved = errno;
    struct op op = {-1, -1, false};
    bool ok = false;
    /* Without the lock: made under a name of this process's own, then
     * renamed into place whole. */
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".side.%ld", (long)getpid());
    if (side_name(name) && len > 0 && len <= SIDE_MAX && op_open(&op)) {
        ok = write_renamed(op.dfd, tmp, name, buf, len) == 1;
        if (ok)
            prune_side(op.dfd);
    }
    op_end(&op);
    errno = saved;
    return ok;
}
