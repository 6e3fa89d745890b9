/* The server mode (RESUMESHIM_SERVER=1). OpenSSL keeps a server's ticket
 * key in its SSL_CTX, made at random when the context is: a server that
 * makes a context per connection (gunicorn's workers call ssl.wrap_socket
 * for each) or per worker can never decrypt its own tickets. The shim
 * gives every server context a ticket-key callback backed by the shared
 * ring (ring.c) from the moment it is made, since the handshake may start
 * inside the first read. A context whose application sets ticket keys or a
 * ticket-key callback of its own is handed back to it (ctx.c, hooks.c).
 *
 * A ticket's keys are those of the configuration the connection started
 * with, and of the server name the client asked for. OpenSSL decrypts a
 * ticket before the server-name callback runs, and issues one after it,
 * which may have switched the connection to another context (virtual
 * hosts): the configuration is therefore taken once, when the handshake
 * starts, and the name binds the ticket to the host it was issued for, so
 * that a ticket for one name never resumes under another's settings.
 *
 * A name callback or a ClientHello callback may end the handshake on
 * another context than it started on, whose client verification then
 * decides. Measured here (OpenSSL 3.0.19, TLS 1.3 and 1.2): the
 * ClientHello callback runs first, then the key callback and the decrypt
 * callback (of the context the connection was made with), then the name
 * callback; the decrypt callback sees SSL_get_SSL_CTX as the ClientHello
 * callback left it; SSL_TICKET_RETURN_IGNORE_RENEW for a ticket that
 * decrypted is a full handshake that issues a new ticket. So a context
 * with a name callback has tickets of its own (verdict.c), and where a
 * ClientHello callback alone picks the context, the client a ticket's
 * session carries is judged in the decrypt callback by the client
 * verification of the context the handshake ends on (admit.c).
 *
 * Any failure here is a full handshake: OpenSSL treats 0 as "no ticket"
 * when issuing and "not mine" when accepting. The callback is never made
 * to return -1, which would fail the connection. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>

#include "admit.h"
#include "algs.h"
#include "ctx.h"
#include "exdata.h"
#include "log.h"
#include "ring.h"
#include "server.h"
#include "settings.h"
#include "ticketkeys.h"
#include "client/verdict.h"

/* Per connection: the fingerprint of the configuration it started with
 * (the context and verify mode it was taken on, and whether that context
 * picks a host by callback), and that of the ticket it resumed with in
 * this handshake. A TLS 1.2 renewal is issued under the same: OpenSSL then
 * reports the session's server name, which it keeps only when the
 * server's name callback acknowledged it. judge: the key callback gave
 * keys for a ticket, which the decrypt callback is about to see. */
struct started {
    unsigned char conf[32];
    unsigned char resumed[32];
    const SSL_CTX *ctx; /* compared only, while the connection holds it */
    int mode;
    unsigned char identity[16]; /* that context's (settings.h) */
    bool has_identity, picks, has_resumed, judge;
};

static int started_index = -1;
static bool ring_ok;

static void free_started(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    if (ptr != NULL)
        explicit_bzero(ptr, sizeof(struct started));
    free(ptr);
}

void server_init(long rotate)
{
    ring_ok = ring_ready(rotate);
    started_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, exdata_dup_none,
                                               free_started);
}

static bool conf_now(SSL *s, struct started *st)
{
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    struct ctx_parts parts = ctx_parts(ctx);
    st->ctx = ctx;
    st->mode = R(SSL_get_verify_mode)(s);
    st->has_identity = parts.rec != NULL;
    if (st->has_identity)
        memcpy(st->identity, parts.rec->identity, sizeof st->identity);
    st->picks = parts.rec != NULL && (parts.rec->name_cb || parts.rec->hello_cb);
    return verdict_server_conf(s, settings_peek(s), &parts, st->conf);
}

/* Takes the configuration's fingerprint, unless this handshake already
 * has one. */
static struct started *started(SSL *s, bool fresh)
{
    struct started *st = started_index >= 0 ? R(SSL_get_ex_data)(s, started_index) : NULL;
    if (st != NULL && !fresh)
        return st;
    if (st == NULL && (st = calloc(1, sizeof *st)) != NULL &&
        R(SSL_set_ex_data)(s, started_index, st) != 1) {
        free(st);
        return NULL;
    }
    if (st != NULL)
        st->has_resumed = st->judge = false;
    if (st != NULL && !conf_now(s, st)) {
        R(SSL_set_ex_data)(s, started_index, NULL);
        free_started(NULL, st, NULL, 0, 0, NULL);
        return NULL;
    }
    return st;
}

void server_begin(SSL *s)
{
    if (!ctx_server_tickets(R(SSL_get_SSL_CTX)(s)))
        return;
    R(ERR_set_mark)();
    started(s, true);
    R(ERR_pop_to_mark)();
}

/* The host name in the ClientHello's server_name extension, while OpenSSL
 * still holds the ClientHello (it decrypts tickets then): empty for none,
 * NULL when the extension cannot be read. */
static const unsigned char *hello_name(SSL *s, size_t *len)
{
    const unsigned char *p;
    size_t n;
    *len = 0;
    if (R(SSL_client_hello_get0_ext)(s, TLSEXT_TYPE_server_name, &p, &n) != 1)
        return (const unsigned char *)"";
    /* list length, then entries of a type and a length each */
    if (n < 2 || (size_t)(p[0] << 8 | p[1]) != n - 2)
        return NULL;
    for (size_t at = 2; at + 3 <= n;) {
        size_t l = (size_t)(p[at + 1] << 8 | p[at + 2]);
        if (at + 3 + l > n)
            return NULL;
        if (p[at] == TLSEXT_NAMETYPE_host_name) {
            *len = l;
            return p + at + 3;
        }
        at += 3 + l;
    }
    return (const unsigned char *)"";
}

/* The ticket's own fingerprint: the configuration and the server name;
 * with moved, the starting context's identity too. A certificate callback
 * (full handshakes only) may have moved the connection to another
 * context, or changed its verify mode, after the fingerprint was taken:
 * the client then passed another verification than the fingerprint's,
 * and a resumption, which runs no certificate callback, ends where it
 * started. Such a ticket is bound to the starting context itself, as
 * OpenSSL's own keys would bind it. (A context that picks a host by a
 * name or ClientHello callback is seen to otherwise.) Accepting, moved
 * says which of the two to try. */
static bool ticket_conf(const struct started *st, const unsigned char *name, size_t len,
                        bool moved, const struct algs *algs, unsigned char conf[32])
{
    unsigned char buf[32 + 16 + 256];
    size_t at = 32;
    if (name == NULL || len > 255 || (moved && (!st->has_identity || st->picks)))
        return false;
    memcpy(buf, st->conf, 32);
    if (moved) {
        memcpy(buf + at, st->identity, sizeof st->identity);
        at += sizeof st->identity;
    }
    memcpy(buf + at, name, len);
    return algs_sha256(algs, buf, at + len, conf);
}

/* The fingerprint a ticket issued now is bound to. */
static bool issue_conf(SSL *s, const struct algs *algs, unsigned char conf[32])
{
    struct started *st = started(s, false);
    if (st == NULL)
        return false;
    /* A TLS 1.2 resumption: renewed under the ticket's own fingerprint, or
     * (resumed from OpenSSL's session cache, whose session may carry no
     * name) not at all. TLS 1.3 and full handshakes report this
     * handshake's name. */
    if (R(SSL_session_reused)(s) && R(SSL_version)(s) < TLS1_3_VERSION) {
        if (!st->has_resumed)
            return false;
        memcpy(conf, st->resumed, 32);
        return true;
    }
    const char *sni = R(SSL_get_servername)(s, TLSEXT_NAMETYPE_host_name);
    const unsigned char *name = (const unsigned char *)(sni != NULL ? sni : "");
    bool moved = !st->picks &&
                 (R(SSL_get_SSL_CTX)(s) != st->ctx || R(SSL_get_verify_mode)(s) != st->mode);
    return ticket_conf(st, name, strlen((const char *)name), moved, algs, conf);
}

/* The keys of a ticket whose key name is key_name, bound one way or the
 * other to the name the ClientHello asks for. */
static bool keys_for(const struct started *st, const unsigned char *name, size_t len, bool moved,
                     const struct algs *algs, const unsigned char key_name[16],
                     unsigned char conf[32], struct ticket_key *k)
{
    return ticket_conf(st, name, len, moved, algs, conf) &&
           ticketkeys_get(algs, conf, ticketkeys_epoch(key_name), false, k) &&
           memcmp(key_name, k->name, sizeof k->name) == 0;
}

static bool keys_into(const struct algs *algs, struct ticket_key *k, unsigned char *iv,
                      EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, bool enc)
{
    static char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, k->mac, sizeof k->mac),
        OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, sizeof digest - 1),
        OSSL_PARAM_END,
        OSSL_PARAM_END,
    };
    /* The HMAC's digest under the context's property query too. */
    if (algs->propq != NULL)
        params[2] = (OSSL_PARAM)OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_PROPERTIES, algs->propq,
                                                       strlen(algs->propq));
    int ok = enc ? R(EVP_EncryptInit_ex)(cipher, algs->aes, NULL, k->aes, iv)
                 : R(EVP_DecryptInit_ex)(cipher, algs->aes, NULL, k->aes, iv);
    return ok == 1 && R(EVP_MAC_CTX_set_params)(mac, params) == 1;
}

/* OpenSSL fails outright, instead of doing a full handshake, a resumption
 * on a connection that verifies clients and has no session id context:
 * no ticket is issued for such a session, and none accepted there. */
static bool verifies_without_context(SSL *s, bool enc, const struct recorded *ctx_rec)
{
    if (!(R(SSL_get_verify_mode)(s) & SSL_VERIFY_PEER))
        return false;
    unsigned len = 0;
    if (enc) {
        SSL_SESSION *sess = R(SSL_get_session)(s);
        if (sess != NULL)
            R(SSL_SESSION_get0_id_context)(sess, &len);
        return len == 0;
    }
    return recorded_sid(settings_peek(s), ctx_rec)->sid_len == 0;
}

static int issue(SSL *s, unsigned char name[16], unsigned char *iv, EVP_CIPHER_CTX *cipher,
                 EVP_MAC_CTX *mac, struct ticket_key *k)
{
    unsigned char conf[32];
    struct ctx_parts parts = ctx_parts(R(SSL_get_SSL_CTX)(s));
    const struct algs *algs = parts.algs;
    if (algs == NULL || verifies_without_context(s, true, parts.rec) ||
        !issue_conf(s, algs, conf) ||
        !ticketkeys_get(algs, conf, ring_epoch(time(NULL)), true, k) ||
        R(RAND_bytes_ex)(algs->libctx, iv, 16, 0) != 1)
        return 0;
    memcpy(name, k->name, sizeof k->name);
    return keys_into(algs, k, iv, cipher, mac, true) ? 1 : 0;
}

/* 2: accepted, and the client is sent a fresh ticket; 1: accepted as it
 * is. TLS 1.3 renews every time: a client that uses each ticket once (as
 * the shim's client side does) would otherwise resume only every other
 * connection, since OpenSSL sends none after a resumption not asked to
 * renew. A TLS 1.2 ticket is renewed, as OpenSSL's own keys do it, only
 * when it was encrypted under a secret that is no longer the current one:
 * a renewal changes the session id the client sees (CPython's test_ssl
 * checks it stays), and rotation must still move clients on. (At this
 * point OpenSSL has already chosen the version: SSL_version is the
 * negotiated one, tested by "TLS 1.2: no renewal under the current key".) */
static int accept_ticket(SSL *s, const unsigned char name[16], unsigned char *iv,
                         EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, struct ticket_key *k)
{
    unsigned char conf[32];
    /* After a HelloRetryRequest the second ClientHello is judged anew. */
    struct started *st = started(s, false);
    if (st != NULL)
        st->has_resumed = st->judge = false;
    struct ctx_parts parts = ctx_parts(R(SSL_get_SSL_CTX)(s));
    const struct algs *algs = parts.algs;
    if (st == NULL || algs == NULL || verifies_without_context(s, false, parts.rec))
        return 0;
    /* The ClientHello's name, read once for both bindings. */
    size_t len;
    const unsigned char *hello = hello_name(s, &len);
    if ((!keys_for(st, hello, len, false, algs, name, conf, k) &&
         (st->picks || !keys_for(st, hello, len, true, algs, name, conf, k))) ||
        !keys_into(algs, k, iv, cipher, mac, false))
        return 0;
    memcpy(st->resumed, conf, 32);
    st->has_resumed = st->judge = true;
    return R(SSL_version)(s) >= TLS1_3_VERSION ||
                   ticketkeys_epoch(name) != ring_epoch(time(NULL))
               ? 2
               : 1;
}

static int ticket_key(SSL *s, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cipher,
                      EVP_MAC_CTX *mac, int enc)
{
    int saved = errno;
    struct ticket_key k;
    R(ERR_set_mark)();
    int r = enc ? issue(s, name, iv, cipher, mac, &k) : accept_ticket(s, name, iv, cipher, mac, &k);
    /* A ticket given keys is counted once decrypted and judged. */
    if (enc ? r : !r)
        stat_add(enc ? ST_SERVER_ISSUED : ST_SERVER_REFUSED);
    LOG(LOG_DEBUG, "server: ticket %s", enc ? (r ? "issued" : "not issued")
                                            : (r ? "accepted" : "not accepted"));
    explicit_bzero(&k, sizeof k);
    R(ERR_pop_to_mark)();
    errno = saved;
    return r;
}

/* What OpenSSL does with a ticket when no decrypt callback is set. */
static SSL_TICKET_RETURN as_is(SSL_TICKET_STATUS status)
{
    return status == SSL_TICKET_SUCCESS          ? SSL_TICKET_RETURN_USE
           : status == SSL_TICKET_SUCCESS_RENEW ? SSL_TICKET_RETURN_USE_RENEW
                                                : SSL_TICKET_RETURN_IGNORE_RENEW;
}

/* Whether a decrypted ticket's client is let in where the handshake
 * ends. Only a ClientHello callback can have moved the connection by now;
 * a context with a name callback has tickets of its own (verdict.c), and
 * one with neither ends where its fingerprint was taken. A connection a
 * ClientHello callback moved to a context with a name callback of its own
 * (which OpenSSL then prefers, and which may move it again) cannot be
 * judged yet: declined. */
static bool admitted(SSL *s, SSL_CTX *start, SSL_SESSION *sess)
{
    const struct recorded *first = ctx_recorded(start);
    if (first == NULL || !first->hello_cb || first->name_cb)
        return true;
    const struct recorded *now = ctx_recorded(R(SSL_get_SSL_CTX)(s));
    return now != NULL && !now->name_cb && admit_session(s, sess);
}

/* The decrypt callback, on every context the server mode serves: arg is
 * that context (the one the connection was made with). The application's
 * own callback decides first, as it would without the shim. */
static SSL_TICKET_RETURN ticket_decrypted(SSL *s, SSL_SESSION *sess,
                                          const unsigned char *name, size_t len,
                                          SSL_TICKET_STATUS status, void *arg)
{
    SSL_CTX *start = arg;
    struct ticket_cbs app = {0};
    ctx_ticket_cbs(start, &app);
    SSL_TICKET_RETURN r = app.dec != NULL ? app.dec(s, sess, name, len, status, app.arg)
                                          : as_is(status);
    struct started *st = started_index >= 0 ? R(SSL_get_ex_data)(s, started_index) : NULL;
    if (st == NULL || !st->judge)
        return r;
    st->judge = false;
    int saved = errno;
    bool decrypted = status == SSL_TICKET_SUCCESS || status == SSL_TICKET_SUCCESS_RENEW;
    bool used = decrypted && (r == SSL_TICKET_RETURN_USE || r == SSL_TICKET_RETURN_USE_RENEW);
    if (used && !admitted(s, start, sess)) {
        LOG(LOG_DEBUG, "server: ticket declined: its client is not one the context the "
                       "handshake ends on admits");
        used = false;
        r = SSL_TICKET_RETURN_IGNORE_RENEW;
    }
    stat_add(used ? ST_SERVER_ACCEPTED : ST_SERVER_REFUSED);
    errno = saved;
    return r;
}

static int ticket_generated(SSL *s, void *arg)
{
    struct ticket_cbs app = {0};
    ctx_ticket_cbs(arg, &app);
    return app.gen != NULL ? app.gen(s, app.arg) : 1;
}

bool server_install(SSL_CTX *ctx)
{
    if (!ring_ok || R(SSL_CTX_set_session_ticket_cb)(ctx, NULL, ticket_decrypted, ctx) != 1)
        return false;
    if (R(SSL_CTX_set_tlsext_ticket_key_evp_cb)(ctx, ticket_key) == 1)
        return true;
    R(SSL_CTX_set_session_ticket_cb)(ctx, NULL, NULL, NULL);
    return false;
}

void server_remove(SSL_CTX *ctx)
{
    struct ticket_cbs app = {0};
    ctx_ticket_cbs(ctx, &app);
    R(SSL_CTX_set_tlsext_ticket_key_evp_cb)(ctx, NULL);
    R(SSL_CTX_set_session_ticket_cb)(ctx, app.gen, app.dec, app.arg);
}

bool server_app_ticket_cb(SSL_CTX *ctx, SSL_CTX_generate_session_ticket_fn gen,
                          SSL_CTX_decrypt_session_ticket_fn dec, void *arg)
{
    struct ticket_cbs app = {gen, dec, arg};
    if (!ctx_server_tickets(ctx) || !ctx_set_ticket_cbs(ctx, &app))
        return false;
    R(SSL_CTX_set_session_ticket_cb)(ctx, gen != NULL ? ticket_generated : NULL,
                                     ticket_decrypted, ctx);
    return true;
}
