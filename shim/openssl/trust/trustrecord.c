/* A trust file's index in the store (trustrecord.h).
 *
 * The record holds the file's whole content, compared byte for byte with
 * what a process reads before it is used: no digest of the content is
 * computed (SHA-256 of Debian's bundle is 126 µs here, about a third of
 * what a resumed one-shot curl trusting one certificate costs in
 * instructions), and a record of other bytes is simply not the one. The
 * names are kept as DER with their X509_NAME_hash_ex, and decoded only
 * when a search's name has the same hash. An FNV-1a sum over the record
 * guards against a damaged file (the store's files are the user's own, as
 * private as its sessions, which are stored verdicts themselves).
 *
 *   "resumeshim-trust-index 1\n", sum (8), content length (4), count (4),
 *   entries (4), the content's fingerprint (32), then each entry: offset
 *   (4), length (4), flags (1: CRL, duplicate), name hash (4), name DER
 *   length (2) and DER, signature length (2) and signature; then the
 *   content. Numbers big-endian; the sum covers everything after it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "store.h"
#include "trustrecord.h"
#include "util.h"

#define MAGIC "resumeshim-trust-index 1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)
#define HEAD (MAGIC_LEN + 8 + 4 + 4 + 4 + 32)
#define ENTRIES_MAX 100000

void trecord_save(const struct tcontent *c)
{
    if (!store_on() || c->n == 0)
        return;
    size_t size = HEAD + c->len;
    unsigned char **der = calloc(c->n, sizeof *der);
    int *derlen = calloc(c->n, sizeof *derlen);
    unsigned long *hash = calloc(c->n, sizeof *hash);
    bool ok = der != NULL && derlen != NULL && hash != NULL;
    for (size_t i = 0; ok && i < c->n; i++) {
        const struct tentry *e = &c->e[i];
        int good = 0;
        derlen[i] = e->name != NULL ? R(i2d_X509_NAME)(e->name, &der[i]) : -1;
        hash[i] = derlen[i] > 0 ? R(X509_NAME_hash_ex)(e->name, NULL, NULL, &good) : 0;
        ok = derlen[i] > 0 && derlen[i] <= 0xffff && good == 1 && e->siglen <= 0xffff &&
             e->off <= UINT32_MAX && e->len <= UINT32_MAX;
        size += 4 + 4 + 1 + 4 + 2 + (size_t)derlen[i] + 2 + e->siglen;
    }
    unsigned char *buf = ok && c->len <= UINT32_MAX ? malloc(size) : NULL;
    if (buf != NULL) {
        unsigned char *p = buf;
        memcpy(p, MAGIC, MAGIC_LEN);
        p += MAGIC_LEN + 8;
        be_put(&p, c->len, 4);
        be_put(&p, (uint64_t)c->count, 4);
        be_put(&p, c->n, 4);
        memcpy(p, c->sighash, 32);
        p += 32;
        for (size_t i = 0; i < c->n; i++) {
            const struct tentry *e = &c->e[i];
            be_put(&p, e->off, 4);
            be_put(&p, e->len, 4);
            be_put(&p, (uint64_t)(e->crl | e->dup << 1), 1);
            be_put(&p, hash[i] & 0xffffffffu, 4);
            be_put(&p, (uint64_t)derlen[i], 2);
            memcpy(p, der[i], (size_t)derlen[i]);
            p += derlen[i];
            be_put(&p, e->siglen, 2);
            memcpy(p, e->sig, e->siglen);
            p += e->siglen;
        }
        memcpy(p, c->bytes, c->len);
        unsigned char *sum = buf + MAGIC_LEN;
        be_put(&sum, fnv1a64(buf + MAGIC_LEN + 8, size - MAGIC_LEN - 8), 8);
        char name[19];
        tindex_record_name(c->bytes, c->len, name);
        store_side_write(name, (const char *)buf, size);
        free(buf);
    }
    for (size_t i = 0; der != NULL && i < c->n; i++)
        R(CRYPTO_free)(der[i], __FILE__, __LINE__);
    free(der);
    free(derlen);
    free(hash);
}

static void free_content(struct tcontent *c)
{
    for (size_t i = 0; c->e != NULL && i < c->n; i++) {
        free(c->e[i].der);
        free((void *)c->e[i].sig);
    }
    free(c->e);
    free(c);
}

/* Every field checked against the record's own bounds and the content's:
 * the entries tile the content from its start, each a block of the kind
 * its flags say (tindex_parse checks that again when it parses one). */
static struct tcontent *decode(const unsigned char *rec, size_t size, const unsigned char *bytes,
                               size_t len)
{
    struct be_reader r = {rec, rec + size, true};
    const unsigned char *magic = be_take(&r, MAGIC_LEN);
    if (magic == NULL || memcmp(magic, MAGIC, MAGIC_LEN) != 0)
        return NULL;
    uint64_t sum = be_get(&r, 8);
    if (!r.ok || fnv1a64(r.p, (size_t)(r.end - r.p)) != sum)
        return NULL;
    size_t clen = be_get(&r, 4);
    uint64_t count = be_get(&r, 4), n = be_get(&r, 4);
    const unsigned char *sighash = be_take(&r, 32);
    if (!r.ok || clen != len || n == 0 || n > ENTRIES_MAX || count != n ||
        (size_t)(r.end - r.p) < clen)
        return NULL;
    struct tcontent *c = calloc(1, sizeof *c);
    if (c == NULL || (c->e = calloc(n, sizeof *c->e)) == NULL) {
        free(c);
        return NULL;
    }
    c->n = n;
    size_t at = 0;
    for (size_t i = 0; r.ok && i < n; i++) {
        struct tentry *e = &c->e[i];
        e->off = be_get(&r, 4);
        e->len = be_get(&r, 4);
        unsigned flags = (unsigned)be_get(&r, 1);
        e->hash = (unsigned long)be_get(&r, 4);
        e->derlen = be_get(&r, 2);
        const unsigned char *der = be_take(&r, e->derlen);
        e->siglen = be_get(&r, 2);
        const unsigned char *sig = be_take(&r, e->siglen);
        r.ok = r.ok && e->off == at && e->len > 0 && e->len <= clen - at && flags <= 3 &&
               e->derlen > 0 && (e->der = malloc(e->derlen)) != NULL &&
               (e->sig = malloc(e->siglen ? e->siglen : 1)) != NULL;
        if (!r.ok)
            break;
        at += e->len;
        e->crl = flags & 1;
        e->dup = flags >> 1;
        memcpy(e->der, der, e->derlen);
        memcpy((unsigned char *)e->sig, sig, e->siglen);
    }
    const unsigned char *content = r.ok ? be_take(&r, clen) : NULL;
    if (content == NULL || r.p != r.end || memcmp(content, bytes, len) != 0) {
        free_content(c);
        return NULL;
    }
    memcpy(c->sighash, sighash, 32);
    c->count = (int)count;
    c->tried = true;
    c->indexed = true;
    return c;
}

struct tcontent *trecord_load(const unsigned char *bytes, size_t len)
{
    if (!store_on())
        return NULL;
    char name[19], *rec;
    size_t size;
    tindex_record_name(bytes, len, name);
    if (!store_side_read(name, &rec, &size))
        return NULL;
    struct tcontent *c = decode((const unsigned char *)rec, size, bytes, len);
    free(rec);
    if (c == NULL)
        return NULL;
    if ((c->bytes = malloc(len)) == NULL) {
        free_content(c);
        return NULL;
    }
    memcpy(c->bytes, bytes, len);
    c->len = len;
    struct tcontent *kept = tindex_adopt(c);
    if (kept != c) {
        free(c->bytes);
        free_content(c);
    }
    return kept;
}
