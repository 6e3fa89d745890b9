/* The fake backend (fake.h). Nothing here is thread-safe: the unit tests
 * drive the core from one thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "sha256.h"
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

/* The command's SHA-256 (cmd/sha256.c): the core's own tests need one
 * without a TLS library, as the command does. */
void fake_sha256(const void *data, size_t len, unsigned char out[32])
{
    sha256(data, len, out);
}
