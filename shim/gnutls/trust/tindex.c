/* The contents of CA loads, indexed (tindex.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tindex.h"

#define SLOTS 256
static struct gcontent *slots[SLOTS];

/* Contents are never freed (lists point into them): a bound on what a
 * process keeps, well above a system directory's (git: the bundle and
 * some 150 files, under 1 MB with their encodings). Past it, loads are
 * GnuTLS's. */
#define MAX_CONTENTS 1024
#define MAX_BYTES (32u << 20)
static unsigned kept;
static size_t kept_bytes;

/* gnulib's hash_pjw_bare, which lib/x509/verify-high.c files a
 * certificate by (3.7.9 and 3.8.9). */
unsigned gindex_bucket(const unsigned char *dn, size_t len)
{
    size_t h = 0;
    for (size_t i = 0; i < len; i++)
        h = dn[i] + ((h << 9) | (h >> (sizeof(size_t) * CHAR_BIT - 9)));
    return (unsigned)(h % TINDEX_BUCKETS);
}

static uint64_t hash_of(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void content_free(struct gcontent *c)
{
    if (c == NULL)
        return;
    for (unsigned i = 0; c->e != NULL && i < c->n; i++)
        greal_free(c->e[i].der.data);
    free(c->e);
    free(c->bytes);
    free(c);
}

/* Each certificate as add_cas will file it: its encoding (what the object
 * re-imports to), its subject's bucket, its times. */
static bool entry_of(gnutls_x509_crt_t crt, struct gentry *e)
{
    gnutls_datum_t dn = {NULL, 0};
    if (G(gnutls_x509_crt_get_raw_dn)(crt, &dn) < 0)
        return false;
    e->bucket = gindex_bucket(dn.data, dn.size);
    greal_free(dn.data);
    e->not_before = G(gnutls_x509_crt_get_activation_time)(crt);
    e->not_after = G(gnutls_x509_crt_get_expiration_time)(crt);
    return G(gnutls_x509_crt_export2)(crt, GNUTLS_X509_FMT_DER, &e->der) == 0 && !greal_missing;
}

static struct gcontent *index_new(const gnutls_datum_t *pem, uint64_t h)
{
    gnutls_x509_crt_t *crts = NULL;
    unsigned n = 0;
    if (G(gnutls_x509_crt_list_import2)(&crts, &n, pem, GNUTLS_X509_FMT_PEM, 0) < 0 ||
        greal_missing)
        return NULL;
    struct gcontent *c = calloc(1, sizeof *c);
    bool ok = c != NULL && n > 0 && (c->bytes = malloc(pem->size)) != NULL &&
              (c->e = calloc(n, sizeof *c->e)) != NULL;
    if (ok) {
        memcpy(c->bytes, pem->data, pem->size);
        c->len = pem->size;
        c->hash = h;
        c->n = n;
    }
    for (unsigned i = 0; i < n; i++) {
        ok = ok && entry_of(crts[i], &c->e[i]);
        G(gnutls_x509_crt_deinit)(crts[i]);
    }
    greal_free(crts);
    if (!ok) {
        content_free(c);
        return NULL;
    }
    return c;
}

const struct gcontent *gindex_of(const gnutls_datum_t *pem)
{
    uint64_t h = hash_of(pem->data, pem->size);
    struct gcontent **slot = &slots[h % SLOTS];
    for (struct gcontent *c = *slot; c != NULL; c = c->next)
        if (c->hash == h && c->len == pem->size && memcmp(c->bytes, pem->data, c->len) == 0)
            return c;
    if (kept >= MAX_CONTENTS || pem->size > MAX_BYTES - kept_bytes)
        return NULL;
    struct gcontent *c = index_new(pem, h);
    if (c != NULL) {
        size_t size = c->len;
        for (unsigned i = 0; i < c->n; i++)
            size += c->e[i].der.size;
        if (size > MAX_BYTES - kept_bytes) {
            content_free(c);
            return NULL;
        }
        kept++;
        kept_bytes += size;
        c->next = *slot;
        *slot = c;
    }
    return c;
}

gnutls_x509_crt_t gindex_crt(const struct gcontent *c, unsigned i)
{
    gnutls_x509_crt_t crt = NULL;
    if (G(gnutls_x509_crt_init)(&crt) < 0 || greal_missing)
        return NULL;
    if (G(gnutls_x509_crt_import)(crt, &c->e[i].der, GNUTLS_X509_FMT_DER) < 0) {
        G(gnutls_x509_crt_deinit)(crt);
        return NULL;
    }
    return crt;
}
