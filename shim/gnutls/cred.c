/* Certificate credentials as recorded (cred.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uthash.h>

#include "cred.h"
#include "fork.h"
#include "session.h"

struct cred_state {
    UT_hash_handle hh;
    const void *cred;
    struct cred_view v;
    bool cb[2];
};

static struct cred_state *creds;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void cred_init(void)
{
    fork_guard(&lock);
}

static struct cred_state *find(const void *cred)
{
    struct cred_state *c;
    HASH_FIND_PTR(creds, &cred, c);
    return c;
}

void cred_new(const void *cred)
{
    struct cred_state *c = calloc(1, sizeof *c), *old;
    pthread_mutex_lock(&lock);
    if ((old = find(cred)) != NULL)
        HASH_DEL(creds, old);
    if (c != NULL) {
        c->cred = cred;
        HASH_ADD_PTR(creds, cred, c);
    }
    pthread_mutex_unlock(&lock);
    free(old);
}

void cred_gone(const void *cred)
{
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        HASH_DEL(creds, c);
    pthread_mutex_unlock(&lock);
    free(c);
}

/* The digest so far, then the input: inputs given in another order, or
 * another number of times, give another digest. */
void cred_trust(const void *cred, char kind, const void *data, size_t len)
{
    unsigned char *buf = malloc(32 + 1 + sizeof len + len), md[32];
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL && buf != NULL) {
        memcpy(buf, c->v.trust, 32);
        buf[32] = (unsigned char)kind;
        memcpy(buf + 33, &len, sizeof len);
        memcpy(buf + 33 + sizeof len, data, len);
        if (gsession_sha256(buf, 33 + sizeof len + len, md))
            memcpy(c->v.trust, md, 32);
        else
            c->v.trust_inexact = true;
    } else if (c != NULL) {
        c->v.trust_inexact = true;
    }
    pthread_mutex_unlock(&lock);
    free(buf);
}

void cred_trust_file(const void *cred, char kind, const char *path)
{
    struct stat st;
    int saved = errno; /* the program may read it after the call */
    bool found = path != NULL && stat(path, &st) == 0;
    errno = saved;
    if (!found) {
        cred_trust(cred, kind, path != NULL ? path : "", path != NULL ? strlen(path) : 0);
        cred_trust_inexact(cred);
        return;
    }
    size_t plen = strlen(path);
    int64_t id[5] = {(int64_t)st.st_dev, (int64_t)st.st_ino, (int64_t)st.st_size,
                     (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
    unsigned char *buf = malloc(sizeof id + plen);
    if (buf == NULL) {
        cred_trust_inexact(cred);
        return;
    }
    memcpy(buf, id, sizeof id);
    memcpy(buf + sizeof id, path, plen);
    cred_trust(cred, kind, buf, sizeof id + plen);
    free(buf);
}

void cred_trust_inexact(const void *cred)
{
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        c->v.trust_inexact = true;
    pthread_mutex_unlock(&lock);
}

void cred_callback(const void *cred, enum cred_cb which, bool set)
{
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->cb[which] = set;
        c->v.callback = c->cb[CB_VERIFY] || c->cb[CB_RETRIEVE];
    }
    pthread_mutex_unlock(&lock);
}

void cred_limits(const void *cred, unsigned max_bits, unsigned max_depth)
{
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->v.max_bits = max_bits;
        c->v.max_depth = max_depth;
    }
    pthread_mutex_unlock(&lock);
}

bool cred_view(const void *cred, struct cred_view *out)
{
    pthread_mutex_lock(&lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        *out = c->v;
    pthread_mutex_unlock(&lock);
    return c != NULL;
}
