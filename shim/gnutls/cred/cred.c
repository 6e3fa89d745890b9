/* Certificate credentials as recorded (cred.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cred.h"
#include "credtab.h"
#include "real.h"
#include "session.h"

struct cred_state {
    struct credent e; /* first */
    struct cred_view v;
    /* The identity in v was computed over this many keys (GnuTLS only
     * ever adds keys, until gnutls_certificate_free_keys drops them all). */
    bool id_done;
    unsigned id_keys;
    unsigned keys_gen; /* changed by each free_keys */
    struct cred_trust_state t;
};

static struct credtab tab = CREDTAB_INIT;

void cred_init(void)
{
    credtab_init(&tab);
}

static struct cred_state *find(const void *cred)
{
    return credtab_find(&tab, cred);
}

void cred_new(const void *cred)
{
    static unsigned long serials;
    unsigned long serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    credtab_new(&tab, cred, sizeof(struct cred_state));
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        c->t.serial = serial;
    pthread_mutex_unlock(&tab.lock);
}

/* Around every change of the trust the shim sees: a judgment that read it
 * meanwhile (busy, or another generation after) keeps no verdict. */
void cred_changing(const void *cred)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->t.busy++;
        c->t.gen++;
    }
    pthread_mutex_unlock(&tab.lock);
}

void cred_changed(const void *cred, bool open)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->t.busy--;
        c->t.gen++;
        c->t.open |= open;
    }
    pthread_mutex_unlock(&tab.lock);
}

bool cred_trust_now(const void *cred, struct cred_trust_state *out)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        *out = c->t;
        out->max_bits = c->v.max_bits;
        out->max_depth = c->v.max_depth;
    }
    pthread_mutex_unlock(&tab.lock);
    return c != NULL;
}

void cred_gone(const void *cred)
{
    credtab_gone(&tab, cred);
}

/* One more item into a running digest: sha256(digest so far, tag, item). */
static bool chain(unsigned char md[32], char tag, const void *data, size_t len)
{
    unsigned char *buf = malloc(32 + 1 + sizeof len + len);
    bool ok = buf != NULL;
    if (ok) {
        memcpy(buf, md, 32);
        buf[32] = (unsigned char)tag;
        memcpy(buf + 33, &len, sizeof len);
        memcpy(buf + 33 + sizeof len, data, len);
        ok = gsession_sha256(buf, 33 + sizeof len + len, md);
    }
    free(buf);
    return ok;
}

/* The digest so far, then the input: inputs given in another order, or
 * another number of times, give another digest. Out of memory, or no
 * hash: the digest stays as it was, which only makes the key choose less
 * well (the judgment decides). */
void cred_trust(const void *cred, char kind, const void *data, size_t len)
{
    unsigned char md[32];
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        memcpy(md, c->v.trust, 32);
        if (chain(md, kind, data, len))
            memcpy(c->v.trust, md, 32);
    }
    pthread_mutex_unlock(&tab.lock);
}

void cred_trust_file(const void *cred, char kind, const char *path)
{
    struct stat st;
    int saved = errno; /* the program may read it after the call */
    bool found = path != NULL && stat(path, &st) == 0;
    errno = saved;
    if (!found) {
        cred_trust(cred, kind, path != NULL ? path : "", path != NULL ? strlen(path) : 0);
        return;
    }
    size_t plen = strlen(path);
    int64_t id[5] = {(int64_t)st.st_dev, (int64_t)st.st_ino, (int64_t)st.st_size,
                     (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
    unsigned char *buf = malloc(sizeof id + plen);
    if (buf == NULL)
        return;
    memcpy(buf, id, sizeof id);
    memcpy(buf + sizeof id, path, plen);
    cred_trust(cred, kind, buf, sizeof id + plen);
    free(buf);
}

void cred_verify_function(const void *cred, gnutls_certificate_verify_function *fn)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        c->v.verify_fn = fn;
    pthread_mutex_unlock(&tab.lock);
}

bool cred_verify_fn(const void *cred, gnutls_certificate_verify_function **fn)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        *fn = c->v.verify_fn;
    pthread_mutex_unlock(&tab.lock);
    return c != NULL;
}

void cred_retrieve(const void *cred, bool set)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL)
        c->v.retrieve = set;
    pthread_mutex_unlock(&tab.lock);
}

void cred_limits(const void *cred, unsigned max_bits, unsigned max_depth)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->v.max_bits = max_bits;
        c->v.max_depth = max_depth;
    }
    pthread_mutex_unlock(&tab.lock);
}

void cred_keys_gone(const void *cred)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    if (c != NULL) {
        c->id_done = false;
        c->keys_gen++;
    }
    pthread_mutex_unlock(&tab.lock);
}

static bool crt_raw(const void *cred, unsigned key, unsigned n, gnutls_datum_t *d)
{
    *d = (gnutls_datum_t){NULL, 0};
    return G(gnutls_certificate_get_crt_raw)((gnutls_certificate_credentials_t)cred, key, n, d) ==
               0 &&
           d->data != NULL && !__atomic_load_n(&greal_missing, __ATOMIC_ACQUIRE);
}

/* The client's identity: for each key, in the order the program gave
 * them, every certificate of its chain and the key itself, by content
 * (GnuTLS picks among them by what the server asks for, so all of them
 * are who the client may be). A key GnuTLS cannot export (a token's): no
 * identity. The count of keys: out. */
static bool identity(const void *cred, unsigned char md[32], unsigned *keys)
{
    gnutls_datum_t d;
    memset(md, 0, 32);
    *keys = 0;
    for (unsigned i = 0; crt_raw(cred, i, 0, &d); i++) {
        for (unsigned j = 0; crt_raw(cred, i, j, &d); j++)
            if (!chain(md, 'c', d.data, d.size))
                return false;
        gnutls_x509_privkey_t key = NULL;
        gnutls_datum_t der = {NULL, 0};
        bool ok = G(gnutls_certificate_get_x509_key)((gnutls_certificate_credentials_t)cred, i,
                                                     &key) == 0 &&
                  key != NULL && G(gnutls_x509_privkey_export2)(key, GNUTLS_X509_FMT_DER, &der) == 0 &&
                  der.data != NULL && chain(md, 'k', der.data, der.size);
        if (der.data != NULL) {
            memset(der.data, 0, der.size);
            greal_free(der.data);
        }
        if (key != NULL)
            G(gnutls_x509_privkey_deinit)(key);
        if (!ok)
            return false;
        *keys = i + 1;
    }
    return !__atomic_load_n(&greal_missing, __ATOMIC_ACQUIRE);
}

bool cred_view(const void *cred, struct cred_view *out)
{
    pthread_mutex_lock(&tab.lock);
    struct cred_state *c = find(cred);
    bool fresh = false;
    unsigned have = 0, gen = 0;
    if (c != NULL) {
        *out = c->v;
        fresh = c->id_done;
        have = c->id_keys;
        gen = c->keys_gen;
    }
    pthread_mutex_unlock(&tab.lock);
    if (c == NULL)
        return false;
    /* Keys are only ever added: one past those counted means more. */
    gnutls_datum_t d;
    if (fresh && !crt_raw(cred, have, 0, &d))
        return true;
    unsigned keys;
    out->identity_ok = identity(cred, out->identity, &keys);
    pthread_mutex_lock(&tab.lock);
    if ((c = find(cred)) != NULL && c->keys_gen == gen) {
        memcpy(c->v.identity, out->identity, sizeof out->identity);
        c->v.identity_ok = out->identity_ok;
        c->id_keys = keys;
        c->id_done = true;
    }
    pthread_mutex_unlock(&tab.lock);
    return true;
}
