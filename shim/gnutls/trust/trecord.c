/* The index of CA loads kept in the store (trecord.h).
 *
 * One record holds every content (a side file each would be more than the
 * store keeps). A content is compared with what a load gives byte for
 * byte before it is used, and its entries are places in it, never
 * certificates: each entry's block is parsed when its bucket is wanted and
 * must be a certificate of the bucket recorded (gindex_crt). So a record
 * rewritten from the user's own account can make a list hold a content's
 * certificates in another order or count, never one the content lacks,
 * though the content may be one GnuTLS refuses whole (a block it cannot
 * decode, left out): only a full parse would tell, which is what the record
 * saves (libresumeshim(7), LIMITS). Its validity times bound the verdict
 * memo. The GnuTLS library that parsed it (release and file) is part of
 * the record's name. An FNV-1a sum over the record guards against a
 * damaged file.
 *
 *   "resumeshim-gnutls-trust 1\n", sum (8), contents (4), then each:
 *   length (4), count (4), the content, then each entry: offset (4),
 *   length (4), bucket (1), notBefore (8), notAfter (8). Numbers
 *   big-endian; the sum covers everything after it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bytes.h"
#include "store.h"
#include "tindex.h"
#include "trecord.h"
#include "util.h"

#define MAGIC "resumeshim-gnutls-trust 1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)
#define ENTRY (4 + 4 + 1 + 8 + 8)
/* Well below what a process keeps (tindex.c, 1,024), so that a process
 * that read a full record has room for contents of its own. */
#define CONTENTS_MAX 256
#define ENTRIES_MAX 100000
/* Each process reads and sums the whole record at its first load: it is
 * kept to the newest contents within 1 MiB (Debian's bundle is 0.2 MiB,
 * what git loads in all 0.5 MiB), about 4 million instructions. */
#define RECORD_MAX (1u << 20)

static bool loaded;
/* The record as read: adopted contents point into it. */
static unsigned char *rec;
static char *fetched;
static size_t fetched_size;
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;
static char name[19];
static bool named;

/* The device and inode of the file mapped at addr (/proc/self/maps). */
static bool mapped_file(const void *addr, unsigned *maj, unsigned *min, unsigned long *ino)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (f == NULL)
        return false;
    char line[512];
    bool found = false;
    uintptr_t a = (uintptr_t)addr;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu", &lo, &hi, maj, min, ino) == 5 &&
            a >= lo && a < hi)
            found = *ino != 0;
    }
    fclose(f);
    return found;
}

/* The library that parsed the contents: its release, and the file the
 * process has mapped as it is on disk (a security update keeps the
 * release's number and may parse differently, and renames its file over
 * the old one while processes of the old one run): none when the file by
 * that name is no longer the one mapped. Once per process. */
static void identify(void)
{
    const char *v = G(gnutls_check_version)(NULL);
    void *fn = (void *)G(gnutls_check_version);
    Dl_info info;
    struct stat st;
    unsigned maj, min;
    unsigned long ino;
    if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL ||
        stat(info.dli_fname, &st) != 0 || !mapped_file(fn, &maj, &min, &ino) ||
        major(st.st_dev) != maj || minor(st.st_dev) != min || st.st_ino != ino)
        return;
    char text[160];
    size_t n = (size_t)snprintf(text, sizeof text, "gnutls trust %s %llu %llu %llu %lld.%09ld",
                                v != NULL ? v : "?", (unsigned long long)st.st_dev,
                                (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
                                (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    uint64_t h = fnv1a64(text, n < sizeof text ? n : sizeof text - 1);
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(h >> (56 - 8 * i));
    memcpy(name, "t-", 2);
    hex_encode(b, 8, name + 2);
    named = true;
}

static void fetch(void)
{
    if (!store_on())
        return;
    identify();
    if (named && !store_side_read(name, &fetched, &fetched_size))
        fetched = NULL;
}

void grecord_fetch(void)
{
    pthread_once(&fetch_once, fetch);
}

/* One content, every field checked against the record's bounds and the
 * content's: entries in order, within it, apart. */
static struct gcontent *decode_one(struct be_reader *r)
{
    size_t len = be_get(r, 4);
    uint64_t n = be_get(r, 4);
    const unsigned char *bytes = be_take(r, len);
    if (!r->ok || len == 0 || n == 0 || n > ENTRIES_MAX)
        return NULL;
    struct gcontent *c = calloc(1, sizeof *c);
    if (c == NULL || (c->e = calloc(n, sizeof *c->e)) == NULL) {
        free(c);
        r->ok = false;
        return NULL;
    }
    c->bytes = bytes;
    c->len = len;
    c->n = (unsigned)n;
    c->blocks = true;
    size_t at = 0;
    for (unsigned i = 0; r->ok && i < c->n; i++) {
        struct gentry *e = &c->e[i];
        e->off = be_get(r, 4);
        e->len = be_get(r, 4);
        e->bucket = (unsigned)be_get(r, 1);
        e->not_before = (time_t)(int64_t)be_get(r, 8);
        e->not_after = (time_t)(int64_t)be_get(r, 8);
        r->ok = r->ok && e->off >= at && e->len > 0 && e->off <= len && e->len <= len - e->off &&
                e->bucket < TINDEX_BUCKETS;
        at = e->off + e->len;
    }
    if (!r->ok) {
        free(c->e);
        free(c);
        return NULL;
    }
    return c;
}

void grecord_load(void)
{
    if (loaded)
        return;
    loaded = true;
    char *buf = fetched;
    size_t size = fetched_size;
    fetched = NULL;
    if (buf == NULL)
        return;
    struct be_reader r = {(unsigned char *)buf, (unsigned char *)buf + size, true};
    const unsigned char *magic = be_take(&r, MAGIC_LEN);
    uint64_t sum = be_get(&r, 8);
    if (magic == NULL || memcmp(magic, MAGIC, MAGIC_LEN) != 0 || !r.ok ||
        fnv1a64(r.p, (size_t)(r.end - r.p)) != sum) {
        free(buf);
        return;
    }
    uint64_t n = be_get(&r, 4);
    if (!r.ok || n > CONTENTS_MAX) {
        free(buf);
        return;
    }
    rec = (unsigned char *)buf;
    for (uint64_t i = 0; r.ok && i < n; i++) {
        struct gcontent *c = decode_one(&r);
        if (c != NULL && !gindex_adopt(c)) {
            free(c->e);
            free(c);
        }
    }
    /* A damaged tail: what was adopted before it stays (each content was
     * checked whole); the buffer stays, as they point into it. */
}

/* The contents, oldest first: their sizes, then which are written (all
 * but the oldest that do not fit). */
struct sizing {
    size_t *sizes, n, cap, skip, at;
    bool failed;
    unsigned char *p;
};

static size_t size_of(const struct gcontent *c)
{
    return c->len > RECORD_MAX ? 0 : 4 + 4 + c->len + (size_t)c->n * ENTRY;
}

static void measure(const struct gcontent *c, void *arg)
{
    struct sizing *s = arg;
    if (s->failed)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        size_t *sizes = realloc(s->sizes, cap * sizeof *sizes);
        if (sizes == NULL) {
            s->failed = true;
            return;
        }
        s->sizes = sizes, s->cap = cap;
    }
    s->sizes[s->n++] = size_of(c);
}

static void write_one(const struct gcontent *c, void *arg)
{
    struct sizing *s = arg;
    if (s->at++ < s->skip || size_of(c) == 0)
        return;
    be_put(&s->p, c->len, 4);
    be_put(&s->p, c->n, 4);
    memcpy(s->p, c->bytes, c->len);
    s->p += c->len;
    for (unsigned i = 0; i < c->n; i++) {
        const struct gentry *e = &c->e[i];
        be_put(&s->p, e->off, 4);
        be_put(&s->p, e->len, 4);
        be_put(&s->p, e->bucket, 1);
        be_put(&s->p, (uint64_t)(int64_t)e->not_before, 8);
        be_put(&s->p, (uint64_t)(int64_t)e->not_after, 8);
    }
}

unsigned char *grecord_build(size_t *out)
{
    if (!named)
        return NULL;
    struct sizing s = {0};
    gindex_each(measure, &s);
    if (s.failed) {
        free(s.sizes);
        return NULL;
    }
    /* The newest that fit, counted back from the newest. */
    size_t size = MAGIC_LEN + 8 + 4, n = 0;
    s.skip = s.n;
    while (s.skip > 0 && n < CONTENTS_MAX && size + s.sizes[s.skip - 1] <= RECORD_MAX) {
        size += s.sizes[--s.skip];
        n += s.sizes[s.skip] != 0;
    }
    free(s.sizes);
    unsigned char *buf = n > 0 ? malloc(size) : NULL;
    if (buf == NULL)
        return NULL;
    memcpy(buf, MAGIC, MAGIC_LEN);
    s.p = buf + MAGIC_LEN + 8;
    be_put(&s.p, n, 4);
    gindex_each(write_one, &s);
    unsigned char *sum = buf + MAGIC_LEN;
    be_put(&sum, fnv1a64(buf + MAGIC_LEN + 8, size - MAGIC_LEN - 8), 8);
    *out = size;
    return buf;
}

void grecord_write(unsigned char *buf, size_t size)
{
    if (buf != NULL && named)
        store_side_write(name, (const char *)buf, size);
    free(buf);
}
