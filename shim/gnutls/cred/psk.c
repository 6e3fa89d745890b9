/* PSK client credentials as recorded (psk.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "credtab.h"
#include "psk.h"
#include "session.h"

struct psk_state {
    struct credent e; /* first */
    struct psk_view v;
};

static struct credtab tab = CREDTAB_INIT;

void psk_init(void)
{
    credtab_init(&tab);
}

static struct psk_state *find(const void *cred)
{
    return credtab_find(&tab, cred);
}

void psk_new(const void *cred)
{
    credtab_new(&tab, cred, sizeof(struct psk_state));
}

void psk_gone(const void *cred)
{
    credtab_gone(&tab, cred);
}

/* A later call replaces the earlier, as in GnuTLS. The digest covers the
 * format too: one key given as hex and as raw bytes digests apart, which
 * costs a resumption, never lets the wrong one in. */
void psk_set(const void *cred, const void *user, size_t user_len, const void *key, size_t key_len,
             unsigned flags)
{
    uint64_t lens[3] = {flags, user_len, key_len};
    size_t n = sizeof lens + user_len + key_len;
    unsigned char *buf = malloc(n), md[32];
    bool ok = buf != NULL;
    if (ok) {
        memcpy(buf, lens, sizeof lens);
        memcpy(buf + sizeof lens, user, user_len);
        memcpy(buf + sizeof lens + user_len, key, key_len);
        ok = gsession_sha256(buf, n, md);
        memset(buf, 0, n);
    }
    free(buf);
    pthread_mutex_lock(&tab.lock);
    struct psk_state *c = find(cred);
    if (c != NULL) {
        c->v.set = true;
        c->v.unknown = !ok;
        if (ok)
            memcpy(c->v.identity, md, sizeof md);
    }
    pthread_mutex_unlock(&tab.lock);
}

void psk_callback(const void *cred, bool set)
{
    pthread_mutex_lock(&tab.lock);
    struct psk_state *c = find(cred);
    if (c != NULL)
        c->v.callback = set;
    pthread_mutex_unlock(&tab.lock);
}

bool psk_view(const void *cred, struct psk_view *out)
{
    pthread_mutex_lock(&tab.lock);
    struct psk_state *c = find(cred);
    if (c != NULL)
        *out = c->v;
    pthread_mutex_unlock(&tab.lock);
    return c != NULL;
}
