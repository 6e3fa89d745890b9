/* The fake backend (fake.h). Nothing here is thread-safe: the unit tests
 * drive the core from one thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "util.h"

#define FAKE_LIVE 0x5e55104eu
#define FAKE_DEAD 0xdeadbeefu
#define CERTS_LIVE 0xce575e75u

static long live, certs_live, errors;
static unsigned next_id = 1;
static struct fake_sess *dead;

struct fake_certs {
    unsigned magic;
    int refs;
    size_t len;
    unsigned char der[FAKE_TICKET_MAX];
};

static struct fake_sess *alive_or_count(const void *sess)
{
    struct fake_sess *s = (struct fake_sess *)sess;
    if (s == NULL || s->magic != FAKE_LIVE || s->refs <= 0) {
        errors++;
        return NULL;
    }
    return s;
}

static struct fake_sess *make(bool tls13, const unsigned char *ticket, size_t len)
{
    struct fake_sess *s = calloc(1, sizeof *s);
    if (s == NULL)
        abort();
    s->magic = FAKE_LIVE;
    s->refs = 1;
    s->tls13 = tls13;
    s->resumable = true;
    s->id = next_id++;
    s->ticket_len = len < FAKE_TICKET_MAX ? len : FAKE_TICKET_MAX;
    memcpy(s->ticket, ticket, s->ticket_len);
    live++;
    return s;
}

struct fake_sess *fake_new(bool tls13, const char *ticket)
{
    return make(tls13, (const unsigned char *)ticket, strlen(ticket));
}

/* The struct outlives its last reference (until fake_reset), so a second
 * free is seen as one rather than as a use after free. */
static void sess_free(void *sess)
{
    struct fake_sess *s = alive_or_count(sess);
    if (s == NULL || --s->refs > 0)
        return;
    s->magic = FAKE_DEAD;
    s->next_dead = dead;
    dead = s;
    live--;
}

static bool sess_up_ref(void *sess)
{
    struct fake_sess *s = alive_or_count(sess);
    if (s != NULL)
        s->refs++;
    return s != NULL;
}

static void *sess_dup(const void *sess)
{
    const struct fake_sess *s = alive_or_count(sess);
    if (s == NULL)
        return NULL;
    struct fake_sess *c = make(s->tls13, s->ticket, s->ticket_len);
    c->resumable = s->resumable;
    c->copy_of = s->copy_of != 0 ? s->copy_of : s->id;
    return c;
}

static bool is_tls13(const void *sess)
{
    const struct fake_sess *s = alive_or_count(sess);
    return s != NULL && s->tls13;
}

static bool resumable(const void *sess)
{
    const struct fake_sess *s = alive_or_count(sess);
    return s != NULL && s->resumable;
}

static uint64_t ticket_digest(const void *sess)
{
    const struct fake_sess *s = alive_or_count(sess);
    return s != NULL ? fnv1a64(s->ticket, s->ticket_len) : 0;
}

static bool same_ticket(const void *a, const void *b)
{
    const struct fake_sess *x = alive_or_count(a), *y = alive_or_count(b);
    return x != NULL && y != NULL && x->ticket_len == y->ticket_len &&
           memcmp(x->ticket, y->ticket, x->ticket_len) == 0;
}

/* "FK", version flag, resumable flag, a length byte, the ticket: the store
 * keeps only these, so a decoded session is a new object with a new id. */
static unsigned char *encode(const void *sess, size_t *len)
{
    const struct fake_sess *s = alive_or_count(sess);
    *len = 0;
    if (s == NULL)
        return NULL;
    unsigned char *out = malloc(5 + s->ticket_len);
    if (out == NULL)
        return NULL;
    out[0] = 'F';
    out[1] = 'K';
    out[2] = s->tls13;
    out[3] = s->resumable;
    out[4] = (unsigned char)s->ticket_len;
    memcpy(out + 5, s->ticket, s->ticket_len);
    *len = 5 + s->ticket_len;
    return out;
}

static void *decode(const unsigned char *der, size_t len)
{
    if (len < 5 || der[0] != 'F' || der[1] != 'K' || der[2] > 1 || der[3] > 1 ||
        der[4] > FAKE_TICKET_MAX || (size_t)der[4] + 5 != len)
        return NULL;
    struct fake_sess *s = make(der[2], der + 5, der[4]);
    s->resumable = der[3];
    return s;
}

void *fake_certs_new(const char *der)
{
    struct fake_certs *c = calloc(1, sizeof *c);
    if (c == NULL)
        abort();
    c->magic = CERTS_LIVE;
    c->refs = 1;
    c->len = strlen(der) < FAKE_TICKET_MAX ? strlen(der) : FAKE_TICKET_MAX;
    memcpy(c->der, der, c->len);
    certs_live++;
    return c;
}

static struct fake_certs *certs_alive(const void *certs)
{
    struct fake_certs *c = (struct fake_certs *)certs;
    if (c == NULL || c->magic != CERTS_LIVE || c->refs <= 0) {
        errors++;
        return NULL;
    }
    return c;
}

/* Chains are few in these tests: freed for real, and ASan catches a
 * second free. */
static void certs_free(void *certs)
{
    struct fake_certs *c = certs_alive(certs);
    if (c == NULL || --c->refs > 0)
        return;
    c->magic = 0;
    certs_live--;
    free(c);
}

static void *certs_up_ref(void *certs)
{
    struct fake_certs *c = certs_alive(certs);
    if (c != NULL)
        c->refs++;
    return c;
}

static unsigned char *certs_encode(const void *certs, size_t *len)
{
    const struct fake_certs *c = certs_alive(certs);
    unsigned char *out = c != NULL ? malloc(c->len ? c->len : 1) : NULL;
    *len = 0;
    if (out != NULL) {
        memcpy(out, c->der, c->len);
        *len = c->len;
    }
    return out;
}

static bool sha256(const void *data, size_t len, unsigned char out[32])
{
    fake_sha256(data, len, out);
    return true;
}

const struct tls_ops fake_ops = {
    .name = "fake",
    .free = sess_free,
    .up_ref = sess_up_ref,
    .dup = sess_dup,
    .is_tls13 = is_tls13,
    .resumable = resumable,
    .ticket_digest = ticket_digest,
    .same_ticket = same_ticket,
    .encode = encode,
    .decode = decode,
    .certs_free = certs_free,
    .certs_up_ref = certs_up_ref,
    .certs_encode = certs_encode,
    .sha256 = sha256,
};

long fake_live(void)
{
    return live;
}

long fake_certs_live(void)
{
    return certs_live;
}

long fake_errors(void)
{
    return errors;
}

void fake_reset(void)
{
    while (dead != NULL) {
        struct fake_sess *s = dead;
        dead = s->next_dead;
        free(s);
    }
}

/* SHA-256 as FIPS 180-4 writes it. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64], a[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(a, h, sizeof a);
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROR(a[4], 6) ^ ROR(a[4], 11) ^ ROR(a[4], 25);
        uint32_t ch = (a[4] & a[5]) ^ (~a[4] & a[6]);
        uint32_t t1 = a[7] + S1 + ch + K[i] + w[i];
        uint32_t S0 = ROR(a[0], 2) ^ ROR(a[0], 13) ^ ROR(a[0], 22);
        uint32_t maj = (a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]);
        uint32_t t2 = S0 + maj;
        memmove(a + 1, a, 7 * sizeof *a);
        a[4] += t1;
        a[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += a[i];
}

void fake_sha256(const void *data, size_t len, unsigned char out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const unsigned char *p = data;
    size_t left = len;
    for (; left >= 64; left -= 64, p += 64)
        block(h, p);
    unsigned char tail[128] = {0};
    memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t n = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
    block(h, tail);
    if (n == 128)
        block(h, tail + 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(h[i] >> 8);
        out[4 * i + 3] = (unsigned char)h[i];
    }
}
