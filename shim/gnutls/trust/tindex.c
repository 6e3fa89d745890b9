/* The contents of CA loads, indexed (tindex.h). */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tindex.h"
#include "trecord.h"

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
static struct gcontent *newest; /* by ->older */
static bool news;
static bool store_read;

/* gnulib's hash_pjw_bare, which lib/x509/verify-high.c files a
 * certificate by (3.7.9 and 3.8.9). */
unsigned gindex_bucket(const unsigned char *dn, size_t len)
{
    size_t h = 0;
    for (size_t i = 0; i < len; i++)
        h = dn[i] + ((h << 9) | (h >> (sizeof(size_t) * CHAR_BIT - 9)));
    return (unsigned)(h % TINDEX_BUCKETS);
}

uint64_t gindex_hash(const unsigned char *p, size_t n)
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
    free((void *)c->bytes);
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

static const unsigned char *find(const unsigned char *p, const unsigned char *end,
                                 const char *s)
{
    size_t n = strlen(s);
    return end - p >= (ptrdiff_t)n ? memmem(p, (size_t)(end - p), s, n) : NULL;
}

/* Where each certificate's PEM block lies: the next BEGIN line of a
 * certificate, to the end of its END line's dashes. Taken only when each
 * block, parsed alone, gives the certificate GnuTLS's parse of the whole
 * gave in that place (the record keeps these places, never certificates). */
static bool blocks_of(struct gcontent *c)
{
    const unsigned char *p = c->bytes, *end = c->bytes + c->len;
    for (unsigned i = 0; i < c->n; i++) {
        const unsigned char *b = p;
        for (;;) {
            b = find(b, end, "-----BEGIN ");
            if (b == NULL)
                return false;
            if (find(b, end, "-----BEGIN CERTIFICATE-----") == b ||
                find(b, end, "-----BEGIN X509 CERTIFICATE-----") == b)
                break;
            b += 11;
        }
        const unsigned char *e = find(b + 11, end, "-----END ");
        const unsigned char *dash = e != NULL ? find(e + 9, end, "-----") : NULL;
        if (dash == NULL)
            return false;
        c->e[i].off = (size_t)(b - c->bytes);
        c->e[i].len = (size_t)(dash + 5 - b);
        p = dash + 5;
        gnutls_x509_crt_t crt = NULL;
        gnutls_datum_t pem = {(unsigned char *)b, (unsigned)c->e[i].len}, der = {NULL, 0};
        bool same = G(gnutls_x509_crt_init)(&crt) >= 0 &&
                    G(gnutls_x509_crt_import)(crt, &pem, GNUTLS_X509_FMT_PEM) >= 0 &&
                    G(gnutls_x509_crt_export2)(crt, GNUTLS_X509_FMT_DER, &der) >= 0 &&
                    !greal_missing && der.size == c->e[i].der.size &&
                    memcmp(der.data, c->e[i].der.data, der.size) == 0;
        greal_free(der.data);
        if (crt != NULL)
            G(gnutls_x509_crt_deinit)(crt);
        if (!same)
            return false;
    }
    return true;
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
        memcpy((void *)c->bytes, pem->data, pem->size);
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
    c->blocks = blocks_of(c);
    return c;
}

static bool keep(struct gcontent *c)
{
    size_t size = c->len;
    for (unsigned i = 0; i < c->n; i++)
        size += c->e[i].der.size;
    if (kept >= MAX_CONTENTS || size > MAX_BYTES - kept_bytes)
        return false;
    kept++;
    kept_bytes += size;
    struct gcontent **slot = &slots[c->hash % SLOTS];
    c->next = *slot;
    *slot = c;
    c->older = newest;
    newest = c;
    return true;
}

bool gindex_adopt(struct gcontent *c)
{
    c->hash = gindex_hash(c->bytes, c->len);
    for (struct gcontent *o = slots[c->hash % SLOTS]; o != NULL; o = o->next)
        if (o->hash == c->hash && o->len == c->len && memcmp(o->bytes, c->bytes, c->len) == 0)
            return false;
    return keep(c);
}

static void each(const struct gcontent *c, void (*fn)(const struct gcontent *, void *), void *arg)
{
    if (c == NULL)
        return;
    each(c->older, fn, arg);
    if (c->blocks)
        fn(c, arg);
}

void gindex_each(void (*fn)(const struct gcontent *c, void *arg), void *arg)
{
    each(newest, fn, arg);
}

bool gindex_news(void)
{
    bool n = news;
    news = false;
    return n;
}

static struct gcontent *known(const gnutls_datum_t *pem, uint64_t h)
{
    for (struct gcontent *c = slots[h % SLOTS]; c != NULL; c = c->next)
        if (c->hash == h && c->len == pem->size && memcmp(c->bytes, pem->data, c->len) == 0)
            return c;
    return NULL;
}

const struct gcontent *gindex_of(const gnutls_datum_t *pem)
{
    uint64_t h = gindex_hash(pem->data, pem->size);
    struct gcontent *k = known(pem, h);
    if (k == NULL && !store_read) {
        store_read = true;
        grecord_load();
        k = known(pem, h);
    }
    if (k != NULL)
        return k;
    if (kept >= MAX_CONTENTS || pem->size > MAX_BYTES - kept_bytes)
        return NULL;
    struct gcontent *c = index_new(pem, h);
    if (c != NULL && !keep(c)) {
        content_free(c);
        return NULL;
    }
    news |= c != NULL && c->blocks;
    return c;
}

gnutls_x509_crt_t gindex_crt(const struct gcontent *c, unsigned i)
{
    const struct gentry *e = &c->e[i];
    gnutls_x509_crt_t crt = NULL;
    if (G(gnutls_x509_crt_init)(&crt) < 0 || greal_missing)
        return NULL;
    gnutls_datum_t pem = {(unsigned char *)c->bytes + e->off, (unsigned)e->len};
    bool ok = e->der.data != NULL
                  ? G(gnutls_x509_crt_import)(crt, &e->der, GNUTLS_X509_FMT_DER) >= 0
                  : G(gnutls_x509_crt_import)(crt, &pem, GNUTLS_X509_FMT_PEM) >= 0;
    if (ok && e->der.data == NULL) {
        /* Read from the store: the block must be a certificate of the
         * bucket the record files it under. */
        gnutls_datum_t dn = {NULL, 0};
        ok = G(gnutls_x509_crt_get_raw_dn)(crt, &dn) >= 0 && !greal_missing &&
             gindex_bucket(dn.data, dn.size) == e->bucket;
        greal_free(dn.data);
    }
    if (!ok) {
        G(gnutls_x509_crt_deinit)(crt);
        return NULL;
    }
    return crt;
}
