/* GnuTLS sessions through the seam (session.h). */
#include <stdlib.h>
#include <string.h>

#include "real.h"
#include "session.h"
#include "util.h"

struct gsess {
    unsigned refs;
    bool tls13;
    size_t len;
    unsigned char data[];
};

void *gsession_new(const unsigned char *data, size_t len, bool tls13)
{
    struct gsess *g = malloc(sizeof *g + len);
    if (g == NULL)
        return NULL;
    *g = (struct gsess){1, tls13, len};
    memcpy(g->data, data, len);
    return g;
}

const unsigned char *gsession_data(const void *sess, size_t *len)
{
    const struct gsess *g = sess;
    *len = g->len;
    return g->data;
}

static void sess_free(void *sess)
{
    struct gsess *g = sess;
    if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(g);
}

static bool sess_up_ref(void *sess)
{
    __atomic_add_fetch(&((struct gsess *)sess)->refs, 1, __ATOMIC_RELAXED);
    return true;
}

static void *sess_dup(const void *sess)
{
    const struct gsess *g = sess;
    return gsession_new(g->data, g->len, g->tls13);
}

static bool sess_tls13(const void *sess)
{
    return ((const struct gsess *)sess)->tls13;
}

/* GnuTLS judges the data only when it is set on a session: one the
 * server no longer accepts costs a full handshake, and the pool's
 * refusal count. */
static bool sess_resumable(const void *sess)
{
    (void)sess;
    return true;
}

static uint64_t sess_digest(const void *sess)
{
    const struct gsess *g = sess;
    return fnv1a64(g->data, g->len);
}

static bool sess_same(const void *a, const void *b)
{
    const struct gsess *x = a, *y = b;
    return x->len == y->len && memcmp(x->data, y->data, x->len) == 0;
}

/* A byte for the version, then GnuTLS's own bytes. */
static unsigned char *sess_encode(const void *sess, size_t *len)
{
    const struct gsess *g = sess;
    unsigned char *out = malloc(g->len + 1);
    *len = 0;
    if (out == NULL)
        return NULL;
    out[0] = g->tls13 ? 13 : 12;
    memcpy(out + 1, g->data, g->len);
    *len = g->len + 1;
    return out;
}

static void *sess_decode(const unsigned char *der, size_t len)
{
    if (len < 2 || (der[0] != 13 && der[0] != 12))
        return NULL;
    return gsession_new(der + 1, len - 1, der[0] == 13);
}

/* GnuTLS keeps the peer's certificates in the session itself: there is no
 * chain of the shim's to keep beside it. */
static void certs_free(void *certs)
{
    (void)certs;
}

static void *certs_up_ref(void *certs)
{
    return certs;
}

static unsigned char *certs_encode(const void *certs, size_t *len)
{
    (void)certs;
    *len = 0;
    return NULL;
}

bool gsession_sha256(const void *data, size_t len, unsigned char out[32])
{
    memset(out, 0, 32);
    return G(gnutls_hash_fast)(GNUTLS_DIG_SHA256, data, len, out) == 0 &&
           !__atomic_load_n(&greal_missing, __ATOMIC_ACQUIRE);
}

const struct tls_ops gtls_ops = {
    .name = "gnutls",
    .free = sess_free,
    .up_ref = sess_up_ref,
    .dup = sess_dup,
    .is_tls13 = sess_tls13,
    .resumable = sess_resumable,
    .ticket_digest = sess_digest,
    .same_ticket = sess_same,
    .encode = sess_encode,
    .decode = sess_decode,
    .certs_free = certs_free,
    .certs_up_ref = certs_up_ref,
    .certs_encode = certs_encode,
    .sha256 = gsession_sha256,
};
