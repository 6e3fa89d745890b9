/* Internal interfaces between the shim's files. Nothing here is exported:
 * the library is built with -fvisibility=hidden and a version script that
 * names only the hooks. */
#ifndef RESUMESHIM_SHIM_H
#define RESUMESHIM_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/ocsp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

struct algs; /* algs.c */

/* exdata.c: ex_data callbacks for plain heap state, and for state a copy
 * made by SSL_dup starts without. */
void exdata_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp);
int exdata_dup_none(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp);
typedef int (*shim_new_session_cb)(SSL *s, SSL_SESSION *sess);
typedef int (*shim_cert_verify_cb)(X509_STORE_CTX *store, void *arg);
typedef int (*shim_status_cb)(SSL *s, void *arg);
typedef int (*shim_ticket_key_cb)(SSL *s, unsigned char *name, unsigned char *iv,
                                  EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, int enc);

/* real.c: the real OpenSSL functions, found at run time. */
#define HOOK(ret, name, params, args) extern __typeof__(name) *ossl_##name;
#include "hooks.def"
#undef HOOK
#define OSSL_FN(name) extern __typeof__(name) *ossl_##name;
#include "ossl.def"
#undef OSSL_FN
/* A function is looked up on its first call (real.c). */
#define R(name)                                                                \
    (*({                                                                       \
        __typeof__(ossl_##name) r_ = __atomic_load_n(&ossl_##name, __ATOMIC_ACQUIRE); \
        if (__builtin_expect(r_ == NULL, 0)) {                                 \
            real_late((void **)&ossl_##name, #name);                           \
            r_ = __atomic_load_n(&ossl_##name, __ATOMIC_ACQUIRE);              \
        }                                                                      \
        r_;                                                                    \
    }))
void real_late(void **slot, const char *name);
/* A variable accessed only through atomics, from threads that may have no
 * other contact (see real.c). */
void atomic_only(void *addr, size_t len);

/* Whether libssl 3 and libcrypto 3 can be found; false leaves the shim off.
 * The hooks find their own real functions (and fail the call as libssl
 * itself would on error when there is none). */
bool real_resolve(void);
/* Resolves one function; for hooks that may run before real_resolve. */
bool real_find(const char *name, void **slot);
/* The system's OpenSSL 3 function of that name, or NULL. */
void *real_lookup(const char *name);

/* caller.c: the function to forward a hook's call to when its caller is
 * bound to another copy of OpenSSL 3; NULL for callers of the system's. */
enum {
#define HOOK(ret, name, params, args) IDX_##name,
#include "hooks.def"
#undef HOOK
    HOOK_COUNT
};
void *real_foreign(const void *caller, unsigned hook);
/* The address range of the module this thread last saw call a hook for the
 * system's OpenSSL: a caller within it needs no real_foreign (a keep-alive
 * request makes two hook calls, and the whole hook must stay within about
 * 1 % of what the request costs). Empty (lo == hi) until there is one. */
struct caller_range {
    uintptr_t lo, hi;
};
extern _Thread_local struct caller_range caller_native;

/* init.c: one-time set-up on the first hook call. True when the shim is to
 * act in this process (resolved, not disabled). Cheap after the first call. */
bool shim_active(void);
/* Whether set-up has already made the shim active, without starting it. */
bool shim_started(void);
/* A function the shim needs is missing: it acts no more. */
void shim_stop(void);

/* config.c */
struct config {
    int pool_size;       /* TLS 1.3 tickets kept per server */
    long max_age;        /* seconds from the verifying full handshake */
    long max_hosts;      /* servers kept, least recently used evicted */
    bool disable;
    bool stats;
    int log_level;
    const char *store; /* RESUMESHIM_STORE, or NULL */
    bool server;       /* RESUMESHIM_SERVER: shared ticket keys for servers */
    long rotate;       /* RESUMESHIM_TICKET_KEY_ROTATE, seconds */
};
extern struct config cfg;
void config_load(void);

/* log.c */
enum { LOG_OFF, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
/* Logs to the regular file at path from now on; NULL, or why it is
 * refused (logging stays on stderr). */
const char *log_open(const char *path);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define LOG(level, ...)                                                        \
    do {                                                                       \
        if (cfg.log_level >= (level))                                          \
            log_msg((level), __VA_ARGS__);                                     \
    } while (0)

enum counter {
    ST_HANDSHAKES, /* client handshakes the shim saw start */
    ST_OFFERED,    /* of those, offered a session from the pool */
    ST_RESUMED,    /* completed as a resumption */
    ST_FULL,       /* completed as a full handshake */
    ST_TICKETS,    /* sessions received from servers and kept */
    ST_EVICTED,    /* kept sessions dropped unused: pool or host limit */
    ST_EXPIRED,    /* kept sessions dropped because they had expired */
    ST_SERVER_ISSUED,   /* server mode: tickets encrypted */
    ST_SERVER_ACCEPTED, /* server mode: tickets decrypted (resumptions) */
    ST_SERVER_REFUSED,  /* server mode: tickets not ours, or too old */
    ST_COUNT
};
void stat_add(enum counter which);
void stats_reset(void);
void stats_print(void);

/* key.c: what a session's verdict depended on, as bytes. Content, never
 * pointers, so equal configurations built twice share sessions. */
#define KEY_MAX 2048
struct key {
    size_t len; /* 0: this connection has no usable key, never resume it */
    unsigned char bytes[KEY_MAX];
    char server[300]; /* host:port, for the store's listing (never in clear) */
    unsigned hash;    /* of the bytes, for the pool's table */
    bool reverify;    /* its callbacks are asked again before an offer */
    bool staple;      /* it asks for a stapled OCSP response, kept with sessions */
    bool judge;       /* ...and judges it by a status callback */
};
/* Settings that change a verdict but that OpenSSL 3.0 offers no getter
 * for, recorded by their hooks as the application makes them: on the
 * context, and on a connection where it overrides the context. */
struct recorded {
    bool sid_set, purpose_set, trust_set;
    unsigned sid_len;
    unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
    int purpose, trust;
    shim_cert_verify_cb cert_verify_cb;
    void *cert_verify_arg;
    /* A context's own identity, random, made with it when the server mode
     * is on: what a callback decides by (its argument, the context's app
     * data) cannot be fingerprinted, so contexts that judge clients by
     * callback share tickets only with themselves and the copies fork
     * makes of them, as OpenSSL's per-context keys would. Never an
     * address: a later context reuses a freed one's. Zero on connections. */
    unsigned char identity[16];
};
enum setting { SET_PURPOSE, SET_TRUST };
void record_sid(struct recorded *r, const unsigned char *sid, unsigned len);
void record_int(struct recorded *r, enum setting which, int value);
void key_build(SSL *s, const struct recorded *conn, const struct recorded *ctx, struct key *k);
/* The session id context in force: the connection's, else its context's
 * (either may be NULL); never NULL. */
const struct recorded *recorded_sid(const struct recorded *conn, const struct recorded *ctx);
/* The fingerprint of a server connection's configuration: what a ticket it
 * issues may be accepted under. False when it cannot be told apart. */
bool key_server_conf(SSL *s, const struct recorded *conn, const struct recorded *ctx,
                     unsigned char conf[32]);
void key_init(void);
/* The application changed a trust store: its fingerprint is taken again.
 * Certificates that verification loads lazily (inside a handshake) are not
 * a change the application made, and do not count. */
void key_store_changed(X509_STORE *store);
/* The application gave a store a lookup location (a CA directory). */
void key_store_lookup(X509_STORE *store, int cmd, const char *where);
void key_atfork_prepare(void);
void key_atfork_parent(void);
void key_atfork_child(void);

/* reverify.c: connections whose application judges the server by callback
 * are offered a session only after that judge accepted the session's
 * server again, now (see reverify.c). */
bool reverify_needed(SSL *s, const struct recorded *ctx_rec);
bool reverify_session(SSL *s, const struct recorded *ctx_rec, SSL_SESSION *sess,
                      STACK_OF(X509) *chain);

/* pool.c: per-server sessions. Every function takes and releases the pool
 * mutex itself and frees sessions only after releasing it. */
/* The peer chain verified by the full handshake behind a session: OpenSSL
 * keeps it in a live session but not in a serialized one. As objects (from
 * a handshake), or as DER (from the store), decoded only when asked for:
 * decoding a certificate costs more than the rest of a resumption. */
struct chain {
    STACK_OF(X509) *certs;
    unsigned char *der;
    size_t der_len;
    /* The OCSP response stapled to it (DER), for connections that ask for
     * one; NULL when none came. lost: a copy of it failed, and what the
     * judge saw can no longer be shown again. */
    unsigned char *staple;
    size_t staple_len;
    bool lost;
};
void chain_free(struct chain *c);
struct chain chain_copy(const struct chain *c);
STACK_OF(X509) *chain_certs(struct chain *c);
/* The DER of every certificate, one after another (malloc'd; NULL, 0 for
 * none or on failure). */
unsigned char *chain_encode(const struct chain *c, size_t *len);

struct pooled {
    SSL_SESSION *sess;      /* a reference the holder owns */
    struct chain chain;     /* owned too */
    time_t born;            /* the full handshake that verified the server */
    time_t expires;         /* never offered at or after this moment */
    bool app;               /* a TLS 1.3 ticket the application keeps */
};
void pooled_free(struct pooled *p);
/* Takes the session to offer, from memory, else from the store. TLS 1.3
 * tickets leave the pool; a TLS 1.2 session stays and the caller receives an
 * extra reference (it must offer a copy). *sess is NULL when there is
 * nothing valid. */
void pool_take(const struct key *k, time_t now, struct pooled *out);
/* Adds a session the pool now owns; dropped when gen is not the current
 * fork generation (a parent's connection seen in a child). */
void pool_put(const struct key *k, struct pooled p, unsigned gen);
/* Removes a TLS 1.3 ticket the application reuses itself: from one
 * server's pool, or (k NULL) from every pool; and keeps it out for good. */
void pool_discard(const struct key *k, const SSL_SESSION *sess);
/* The same for a ticket the application took (SSL_get1_session), as one
 * its new-session callback kept: out of every pool for good, but a
 * reservation for the store stays (pool_reserve). */
void pool_took(const struct key *k, const SSL_SESSION *sess);
/* A TLS 1.3 ticket the application keeps for itself (its new-session
 * callback returned 1). With a store, it is published there at exit unless
 * the application offered or serialized it meanwhile: a program that runs
 * once per request never offers what it kept. */
void pool_reserve(const struct key *k, struct pooled p, unsigned gen);
/* Cancels the reservation of a ticket that is going its ordinary way after
 * all (unlike pool_discard, it stays welcome in the pool). */
void pool_unreserve(const SSL_SESSION *sess);
/* At exit: writes to the store what this process leaves: the reserved
 * tickets and the pools' sessions. */
void pool_flush(void);
/* Drops every session of a server (the application refused it). */
void pool_forget(const struct key *k);
/* Whether the server accepted what was offered to it. */
void pool_verdict(const struct key *k, bool resumed);
unsigned pool_generation(void);
/* The table's hash of a key's bytes, taken once when the key is built. */
unsigned pool_key_hash(const unsigned char *bytes, size_t len);
void pool_atfork_prepare(void);
void pool_atfork_parent(void);
void pool_atfork_child(void);

/* ocsp.c: the application's OCSP status callback, with the staple a
 * session's full handshake received shown again on resumption. */
#define MAX_STAPLE_BYTES 16384
enum ocsp_judge {
    OCSP_NONE,    /* the connection asks for no staple */
    OCSP_STAPLE,  /* asks for one, judged by no callback */
    OCSP_JUDGED,  /* asks, and the application's callback judges it */
    OCSP_UNKNOWN, /* a callback the shim does not stand in for */
};
void ocsp_init(void);
/* The application sets (or clears) a context's status callback: the
 * shim's stands in for it. False when the call is left to OpenSSL. */
bool ocsp_set_cb(SSL_CTX *ctx, void (*fp)(void), long *ret);
/* The application reads the callback back (parg as for the ctrl). */
void ocsp_hide_cb(SSL_CTX *ctx, void *parg);
enum ocsp_judge ocsp_judge_of(SSL *s);
/* Calls the application's callback, as OpenSSL would. */
int ocsp_ask(SSL *s);
/* Puts the chain's staple (none: nothing) on the connection, as the
 * response the server sent. False when it could not. */
bool ocsp_present(SSL *s, const struct chain *c);
/* The earliest nextUpdate in a response; none: no bound (LONG_MAX); one
 * that cannot be read: 0. */
time_t ocsp_valid_until(const unsigned char *der, size_t len);

/* store.c: the cross-process store (RESUMESHIM_STORE). Each call opens,
 * locks and closes the store itself; false or nothing means the store could
 * not be used and the caller goes on without it. */
struct stored;
void store_init(const char *dir);
bool store_on(void);
/* Takes a session from the store: a TLS 1.3 ticket leaves it. */
void store_take(const struct key *k, time_t now, struct pooled *out);
/* Removes a key's entry (the application refused the server). */
void store_forget(const struct key *k);
void store_atfork_prepare(void);
void store_atfork_parent(void);
void store_atfork_child(void);
/* A session encoded and named now (NULL when it cannot be), to be written
 * later by store_write, which calls no OpenSSL function (it may run after
 * OpenSSL's cleanup). Freed with free(). */
struct stored *store_encode(const struct key *k, const struct pooled *p);
/* Adds the sessions to the store, in one operation; the list is given
 * oldest first, and reordered. */
void store_write(struct stored **list, unsigned n);
typedef bool (*store_update)(const char *in, size_t len, char *out, size_t *out_len, void *arg);
bool store_rewrite(const char *name, size_t max, store_update update, void *arg);

/* ring.c: the server mode's ticket keys, one secret per rotation period,
 * shared by the process's workers (and, with a store, its key file). */
struct ticket_key {
    unsigned char name[16]; /* the period, then a tag of the configuration */
    unsigned char aes[32], mac[32];
};
/* Made at load time, before a server forks its workers. */
void ring_prepare(void);
bool ring_ready(void);
int64_t ring_epoch(time_t now);
int64_t ring_name_epoch(const unsigned char name[16]);
/* The keys of one configuration (its fingerprint) for a period: the current
 * one (made when create), or the previous one (decryption only). */
bool ring_keys(const struct algs *algs, const unsigned char conf[32], int64_t epoch, bool create,
               struct ticket_key *k);

/* server.c: the ticket-key callback on server contexts. */
void server_init(void);
/* False when the server mode cannot run (no shared memory for the ring). */
bool server_install(SSL_CTX *ctx);
void server_remove(SSL_CTX *ctx);
/* A server connection's handshake starts. (Not undone by SSL_clear:
 * OpenSSL calls that itself as a handshake starts.) */
void server_begin(SSL *s);

/* appsess.c: a client handshake that starts with a session the shim did
 * not offer runs on a private copy of it where the shim's cache-mode bit
 * would mark it not resumable; the application keeps seeing its own. */
void appsess_init(void);
/* The handshake starts with the connection's session own. */
void appsess_begin(SSL *s, SSL_SESSION *own);
/* The application sets a session (or none) itself. */
void appsess_forget(SSL *s);
/* The session to show the application for the connection's real one. */
SSL_SESSION *appsess_shown(const SSL *s, SSL_SESSION *real);

/* session.c: properties of sessions. */
bool session_is_tls13(const SSL_SESSION *sess);
bool session_same_ticket(const SSL_SESSION *a, const SSL_SESSION *b);
/* The last moment the session may be offered, from its own contents. */
time_t session_expiry(const SSL_SESSION *sess, time_t born, X509 *own_cert);
#define MAX_TICKET_BYTES 8192
#define MAX_LIFETIME (7 * 24 * 3600)

/* algs.c: the algorithms the shim computes with, from the library context
 * and property query of the SSL_CTX they serve. */
struct algs {
    OSSL_LIB_CTX *libctx;
    char *propq;
    EVP_MD *sha256, *sha1;
    EVP_CIPHER *aes; /* AES-256-CBC: the server mode's tickets */
    EVP_MAC *hmac;
};
/* NULL when the library context lacks any of them. */
struct algs *algs_fetch(OSSL_LIB_CTX *libctx, const char *propq);
void algs_free(struct algs *a);
/* The default library context's, for what serves no one context (the
 * store's file names, trust-store fingerprints' lookups). */
const struct algs *algs_default(void);
/* False for a NULL a, or when the computation fails. */
bool algs_sha256(const struct algs *a, const void *data, size_t len, unsigned char out[32]);
bool algs_hmac256(const struct algs *a, const unsigned char key[32], const void *data,
                  size_t len, unsigned char out[32]);

/* ctx.c: per-SSL_CTX state; the shim's new-session callback and the cache
 * mode bits it adds, hidden from the application. */
void ctx_init(void);
void ctx_setup(SSL_CTX *ctx, OSSL_LIB_CTX *libctx, const char *propq);
/* The algorithms of the context's library context; NULL when it has none
 * (nothing is then computed for it: no resumption, no server tickets). */
const struct algs *ctx_algs(SSL_CTX *ctx);
/* A client handshake starts on ctx. */
void ctx_connecting(SSL_CTX *ctx);
bool ctx_cache_mode(SSL_CTX *ctx, int cmd, long larg, long *ret);
bool ctx_set_app_cb(SSL_CTX *ctx, shim_new_session_cb cb);
bool ctx_get_app_cb(SSL_CTX *ctx, shim_new_session_cb *cb);
/* Whether SSL_SESS_CACHE_CLIENT is on only because the shim put it there. */
bool ctx_adds_client_cache(SSL_CTX *ctx);
/* The application manages the context's ticket keys itself. */
void ctx_own_tickets(SSL_CTX *ctx);
/* Whether the context's tickets are the server mode's. */
bool ctx_server_tickets(SSL_CTX *ctx);
/* NULL for a context the shim did not set up. */
struct recorded *ctx_recorded(SSL_CTX *ctx);

/* conn.c: a client connection's life as the shim follows it. */
/* Handshake hooks nest and may run on many threads: a per-thread depth
 * tells the trust-store hooks whether OpenSSL is verifying right now. */
extern _Thread_local int conn_in_handshake;
void conn_init(void);
enum io { IO_HANDSHAKE, IO_READ, IO_WRITE };
void conn_begin(SSL *s, bool client, enum io io);
/* True when the shim fails the call: the application's status callback
 * refused the staple of a resumed TLS 1.2 connection. */
bool conn_after(SSL *s, int ret, enum io io);
/* Around the application's status callback, inside a handshake. */
void conn_status_before(SSL *s);
void conn_status_after(SSL *s, int verdict);
/* A session the server sent; app_kept: the application's callback kept it. */
void conn_session(SSL *s, SSL_SESSION *sess, bool app_kept);
/* A connection whose handshake is done and used and whose TCP_NODELAY is
 * the program's again needs nothing from the handshake, read and write
 * hooks until it is cleared or freed: the thread that last saw one keeps
 * it, with the epoch then, which every clear and free of a followed
 * connection changes (an address may be reused by a new SSL). A
 * keep-alive request then costs the hooks a few comparisons, not two
 * ex_data lookups (about 120 instructions). */
extern _Thread_local const SSL *conn_quiet;
extern _Thread_local unsigned long conn_quiet_epoch;
extern unsigned long conn_epoch;
static inline bool conn_is_quiet(const SSL *s)
{
    return s == conn_quiet && conn_quiet_epoch == __atomic_load_n(&conn_epoch, __ATOMIC_ACQUIRE);
}
/* Before SSL_clear: whether the connection had a life to settle. After it,
 * conn_cleared settles it and readies the state for the next handshake. */
bool conn_clearing(SSL *s);
void conn_cleared(SSL *s);
/* NULL when no state could be made for the connection. */
struct recorded *conn_recorded(SSL *s);
/* The same, without making state for a connection that has none. */
const struct recorded *conn_recorded_peek(SSL *s);
void conn_app_took(SSL *s, SSL_SESSION *sess);
/* The verified chain behind a connection resumed from a session restored
 * from the store, which carries the peer's leaf but not its chain. */
STACK_OF(X509) *conn_peer_chain(const SSL *s);

#endif
