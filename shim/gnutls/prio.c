/* Priority caches' strings (prio.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

#include "fork.h"
#include "prio.h"
#include "real.h"
#include "session.h"

struct prio_state {
    UT_hash_handle hh;
    const void *prio;
    char text[];
};

static struct prio_state *prios;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void prio_init(void)
{
    fork_guard(&lock);
}

void prio_made(const void *prio, const char *text)
{
    size_t len = text != NULL ? strlen(text) : 0;
    struct prio_state *p = text != NULL ? malloc(sizeof *p + len + 1) : NULL, *old;
    if (p != NULL) {
        p->prio = prio;
        memcpy(p->text, text, len + 1);
    }
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, old);
    if (old != NULL)
        HASH_DEL(prios, old);
    if (p != NULL) {
        HASH_ADD_PTR(prios, prio, p);
        if (p->hh.tbl == NULL)
            free(p);
    }
    pthread_mutex_unlock(&lock);
    free(old);
}

void prio_gone(const void *prio)
{
    struct prio_state *p;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, p);
    if (p != NULL)
        HASH_DEL(prios, p);
    pthread_mutex_unlock(&lock);
    free(p);
}

char *prio_text(const void *prio)
{
    struct prio_state *p;
    char *copy = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, p);
    if (p != NULL)
        copy = strdup(p->text);
    pthread_mutex_unlock(&lock);
    return copy;
}

/* The system configuration: a digest of its bytes, taken again whenever
 * the file's identity or times change (GnuTLS reloads it then too). */
static struct {
    bool valid;
    struct stat st;
    unsigned char md[32];
} sys_cache;

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* GnuTLS takes GNUTLS_SYSTEM_PRIORITY_FILE once, when it is loaded, and
 * keeps the pointer (lib/priority.c, _gnutls_prepare_to_load_system_priorities;
 * gnutls_get_system_config_file answers it; 3.7.9 and 3.8.9): the
 * environment read now may name another file or none once the program
 * changed it (a configuration written to the first path and unsetenv
 * then made GnuTLS 3.7.9 refuse every later connection under its
 * min-verification-profile while a file looked for by the environment
 * stayed absent). */
const char *prio_config_path(void)
{
    const char *path = G(gnutls_get_system_config_file)();
    return path != NULL ? path : "/etc/gnutls/config";
}

bool prio_system(unsigned char out[32])
{
    const char *path = prio_config_path();
    int saved = errno;
    struct stat st;
    bool ok = true;
    pthread_mutex_lock(&lock);
    if (stat(path, &st) != 0) {
        /* No file: what GnuTLS applies is its built-in defaults. */
        ok = errno == ENOENT || errno == ENOTDIR;
        memset(out, 0, 32);
    } else if (sys_cache.valid && same_file(&st, &sys_cache.st)) {
        memcpy(out, sys_cache.md, 32);
    } else {
        sys_cache.valid = false;
        char *buf = st.st_size >= 0 && st.st_size <= (1 << 20) ? malloc((size_t)st.st_size + 1) : NULL;
        int fd = buf != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        ssize_t got = fd >= 0 ? read(fd, buf, (size_t)st.st_size + 1) : -1;
        ok = got == st.st_size && gsession_sha256(buf, (size_t)got, out);
        if (ok) {
            sys_cache.valid = true;
            sys_cache.st = st;
            memcpy(sys_cache.md, out, 32);
        }
        if (fd >= 0)
            close(fd);
        free(buf);
    }
    pthread_mutex_unlock(&lock);
    errno = saved;
    return ok;
}
