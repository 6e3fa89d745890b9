/* Per-SSL_CTX state: the application's own new-session callback and the
 * session-cache mode bits the shim added, both hidden from the application.
 *
 * A client only sees TLS 1.3 tickets through the new-session callback, and
 * that fires only when the cache mode includes SSL_SESS_CACHE_CLIENT (a new
 * context has SERVER only). So the shim ORs CLIENT in, installs its callback
 * on every context (some programs, Ruby among them, install one of their own
 * on every context yet never resume), and calls the application's callback
 * exactly when OpenSSL would have without the shim. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ctx.h"
#include "later.h"

struct ctx_state {
    shim_new_session_cb app_cb;
    shim_status_cb status_cb; /* the application's, set through ocsp.c */
    struct ticket_cbs ticket_cbs; /* the application's, set through server.c */
    long added;             /* mode bits the application did not ask for */
    bool client_only;       /* method can only connect */
    bool connects;          /* seen connecting, before it ever accepted */
    bool tickets;           /* its ticket keys are the server mode's */
    bool own_algs;          /* its library context is not the default */
    struct algs *algs;      /* with own_algs; NULL: none could be fetched */
    struct recorded rec;
};

static int ctx_index = -1;
static void (*client_session)(SSL *s, SSL_SESSION *sess, bool app_kept);
static bool serving;
/* OpenSSL's own security callback, read off a context just made. Every
 * context and connection starts with the same one (ssl_cert_new sets the
 * static ssl_security_default_callback, ssl/ssl_cert.c of 3.0.19 and 3.5.7;
 * the same address from client, server, DTLS and own-library-context
 * contexts and their connections on Debian's 3.0.19 and 3.5.9). */
static shim_sec_cb default_sec_cb;

static void free_state(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                       void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    struct ctx_state *st = ptr;
    if (st != NULL)
        algs_free(st->algs);
    free(st);
}

void ctx_init(void (*on_session)(SSL *s, SSL_SESSION *sess, bool app_kept), bool server_mode)
{
    client_session = on_session;
    serving = server_mode;
    ctx_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL_CTX, 0, NULL, NULL, NULL,
                                           free_state);
}

static struct ctx_state *state(SSL_CTX *ctx)
{
    return ctx_index >= 0 && ctx != NULL ? R(SSL_CTX_get_ex_data)(ctx, ctx_index) : NULL;
}

/* The bits to add to an application's mode. CLIENT always. NO_INTERNAL_STORE
 * when the application did not ask for client caching itself: the internal
 * store would otherwise keep every client session (with its certificate
 * chain) until OpenSSL's 20,480-entry limit. It is shared with the server
 * side, though, so a context with a generic method (Ruby, Perl, PHP use
 * TLS_method) gets it only once it is seen connecting before it has
 * accepted anything. */
static long bits_to_add(const struct ctx_state *st, long app_mode)
{
    long add = 0;
    if (!(app_mode & SSL_SESS_CACHE_CLIENT)) {
        add |= SSL_SESS_CACHE_CLIENT;
        if (st->client_only || __atomic_load_n(&st->connects, __ATOMIC_RELAXED) ||
            !(app_mode & SSL_SESS_CACHE_SERVER))
            add |= SSL_SESS_CACHE_NO_INTERNAL_STORE & ~app_mode;
    }
    return add;
}

static int new_session(SSL *s, SSL_SESSION *sess);

/* The mode as the application set it: the real one less what we added. */
static long app_mode(SSL_CTX *ctx, const struct ctx_state *st)
{
    return R(SSL_CTX_ctrl)(ctx, SSL_CTRL_GET_SESS_CACHE_MODE, 0, NULL) & ~st->added;
}

static void set_app_mode(SSL_CTX *ctx, struct ctx_state *st, long mode)
{
    st->added = bits_to_add(st, mode);
    R(SSL_CTX_ctrl)(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, mode | st->added, NULL);
}

bool ctx_setup(SSL_CTX *ctx, OSSL_LIB_CTX *libctx, const char *propq)
{
    if (ctx == NULL || state(ctx) != NULL)
        return false;
    struct ctx_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return false;
    const SSL_METHOD *m = R(SSL_CTX_get_ssl_method)(ctx);
    if (later_quic(m)) {
        free(st);
        return false;
    }
    st->client_only = m == R(TLS_client_method)() || m == R(DTLS_client_method)();
    if (__atomic_load_n(&default_sec_cb, __ATOMIC_ACQUIRE) == NULL)
        __atomic_store_n(&default_sec_cb, R(SSL_CTX_get_security_callback)(ctx), __ATOMIC_RELEASE);
    /* Fetched now, while only this thread knows the context. */
    st->own_algs = libctx != NULL || propq != NULL;
    if (st->own_algs)
        st->algs = algs_fetch(libctx, propq);
    if (R(SSL_CTX_set_ex_data)(ctx, ctx_index, st) != 1) {
        algs_free(st->algs);
        free(st);
        return false;
    }
    st->app_cb = R(SSL_CTX_sess_get_new_cb)(ctx);
    set_app_mode(ctx, st, app_mode(ctx, st));
    R(SSL_CTX_sess_set_new_cb)(ctx, new_session);
    return true;
}

shim_sec_cb ctx_default_sec_cb(void)
{
    return __atomic_load_n(&default_sec_cb, __ATOMIC_ACQUIRE);
}

/* Where the shim cannot compute, OpenSSL keeps its own ticket keys. */
bool ctx_may_serve(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return serving && st != NULL && !st->client_only && ctx_algs(ctx) != NULL &&
           getrandom(st->rec.identity, sizeof st->rec.identity, GRND_NONBLOCK) ==
               sizeof st->rec.identity;
}

void ctx_set_server_tickets(SSL_CTX *ctx, bool on)
{
    struct ctx_state *st = state(ctx);
    if (st != NULL)
        __atomic_store_n(&st->tickets, on, __ATOMIC_RELAXED);
}

static struct ctx_parts parts_of(const struct ctx_state *st)
{
    return (struct ctx_parts){st != NULL ? &st->rec : NULL,
                              st != NULL && st->own_algs ? st->algs : algs_default()};
}

const struct algs *ctx_algs(SSL_CTX *ctx)
{
    return parts_of(state(ctx)).algs;
}

struct ctx_parts ctx_parts(SSL_CTX *ctx)
{
    return parts_of(state(ctx));
}

bool ctx_adds_client_cache(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return st != NULL && (__atomic_load_n(&st->added, __ATOMIC_RELAXED) & SSL_SESS_CACHE_CLIENT);
}

bool ctx_server_tickets(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return st != NULL && __atomic_load_n(&st->tickets, __ATOMIC_RELAXED);
}

bool ctx_own_tickets(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return st != NULL && __atomic_exchange_n(&st->tickets, false, __ATOMIC_RELAXED);
}

/* libssl's SSL_CTX_new reaches the hooks (it calls SSL_CTX_new_ex through
 * its PLT), so even a context made past the preload has the shim's state;
 * a program calling libssl directly then replaces the shim's new-session
 * callback with its own without the hook seeing it. */
bool ctx_connecting(SSL_CTX *ctx, struct ctx_parts *parts)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL || R(SSL_CTX_sess_get_new_cb)(ctx) != new_session)
        return false;
    if (!st->client_only && !__atomic_load_n(&st->connects, __ATOMIC_RELAXED) &&
        R(SSL_CTX_ctrl)(ctx, SSL_CTRL_SESS_ACCEPT, 0, NULL) == 0 &&
        !__atomic_exchange_n(&st->connects, true, __ATOMIC_RELAXED))
        set_app_mode(ctx, st, app_mode(ctx, st));
    *parts = parts_of(st);
    return true;
}

bool ctx_cache_mode(SSL_CTX *ctx, int cmd, long larg, long *ret)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    *ret = app_mode(ctx, st);
    if (cmd == SSL_CTRL_SET_SESS_CACHE_MODE)
        set_app_mode(ctx, st, larg);
    return true;
}

bool ctx_set_status_cb(SSL_CTX *ctx, shim_status_cb cb)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    st->status_cb = cb;
    return true;
}

shim_status_cb ctx_status_cb(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return st != NULL ? st->status_cb : NULL;
}

bool ctx_set_app_cb(SSL_CTX *ctx, shim_new_session_cb cb)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    st->app_cb = cb;
    return true;
}

bool ctx_get_app_cb(SSL_CTX *ctx, shim_new_session_cb *cb)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    *cb = st->app_cb;
    return true;
}

struct recorded *ctx_recorded(SSL_CTX *ctx)
{
    struct ctx_state *st = state(ctx);
    return st != NULL ? &st->rec : NULL;
}

bool ctx_set_ticket_cbs(SSL_CTX *ctx, const struct ticket_cbs *cbs)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    st->ticket_cbs = *cbs;
    return true;
}

bool ctx_ticket_cbs(SSL_CTX *ctx, struct ticket_cbs *cbs)
{
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return false;
    *cbs = st->ticket_cbs;
    return true;
}

/* OpenSSL hands a reference to the connection's own session; returning 1
 * keeps it, 0 lets OpenSSL drop it. The application's callback runs first
 * and only where it would have run without us (server sessions, or client
 * sessions when it asked for client caching). A session it keeps is one it
 * may offer again itself, so the shim does not offer that one: the same
 * TLS 1.3 ticket must never be offered twice (it may publish it at exit,
 * see ledger_reserve). */
static int new_session(SSL *s, SSL_SESSION *sess)
{
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    struct ctx_state *st = state(ctx);
    if (st == NULL)
        return 0;
    shim_new_session_cb app = st->app_cb;
    long mode = app_mode(ctx, st);
    bool server = R(SSL_is_server)(s);
    bool app_sees = app != NULL && (mode & (server ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_CLIENT));
    int kept = app_sees ? app(s, sess) : 0;
    if (!server)
        client_session(s, sess, kept != 0);
    return kept;
}
