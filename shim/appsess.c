/* Sessions the application sets itself (SSL_set_session), kept as OpenSSL
 * alone would keep them.
 *
 * The shim turns SSL_SESS_CACHE_CLIENT on to hear about tickets (ctx.c),
 * and with that bit OpenSSL's tls_finish_handshake removes the session of
 * every TLS 1.3 client handshake from the cache, which marks it not
 * resumable, and a renewed TLS 1.2 ticket does the same to the session it
 * replaces (ssl/statem/statem_lib.c and statem_clnt.c, 3.0). Without the
 * shim, an application that keeps one session and sets it on three later
 * connections resumes all three; under the bit, only the first (measured:
 * tests/client.c --native-first, "reused=1 of=4 ... resumable=0"). So where
 * the bit is the shim's, OpenSSL is handed a private copy, and the
 * application's object is never touched. While the connection's session is
 * still that copy, SSL_get_session and SSL_get1_session answer with the
 * application's object, as without the shim; once tickets arrive, OpenSSL
 * has a new session, which they report as usual. */
#include <stdlib.h>

#include "shim.h"

struct appsess {
    SSL_SESSION *app;  /* the application's object; a reference */
    SSL_SESSION *copy; /* what OpenSSL was given; a reference, so that no
                          other session can take its address */
};

static int appsess_index = -1;

static void forget(struct appsess *a)
{
    if (a == NULL)
        return;
    R(SSL_SESSION_free)(a->app);
    R(SSL_SESSION_free)(a->copy);
    a->app = a->copy = NULL;
}

static void free_appsess(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    forget(ptr);
    free(ptr);
}

/* SSL_dup gives the copy its session through SSL_set_session itself. */
static int dup_appsess(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                       long argl, void *argp)
{
    (void)to, (void)from, (void)idx, (void)argl, (void)argp;
    *from_d = NULL;
    return 1;
}

void appsess_init(void)
{
    appsess_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, dup_appsess,
                                               free_appsess);
}

static struct appsess *state(const SSL *s)
{
    return appsess_index >= 0 ? R(SSL_get_ex_data)(s, appsess_index) : NULL;
}

int appsess_set(SSL *s, SSL_SESSION *sess)
{
    struct appsess *a = state(s);
    forget(a);
    SSL_SESSION *copy = NULL;
    if (sess != NULL && ctx_adds_client_cache(R(SSL_get_SSL_CTX)(s)) &&
        R(SSL_SESSION_is_resumable)(sess) && appsess_index >= 0 &&
        (a != NULL || ((a = calloc(1, sizeof *a)) != NULL &&
                       (R(SSL_set_ex_data)(s, appsess_index, a) == 1 || (free(a), false)))))
        copy = R(SSL_SESSION_dup)(sess);
    if (copy == NULL)
        return R(SSL_set_session)(s, sess);
    int r = R(SSL_set_session)(s, copy);
    if (r != 1) {
        R(SSL_SESSION_free)(copy);
        return R(SSL_set_session)(s, sess);
    }
    R(SSL_SESSION_up_ref)(sess);
    a->app = sess;
    a->copy = copy;
    return r;
}

SSL_SESSION *appsess_shown(const SSL *s, SSL_SESSION *real)
{
    const struct appsess *a = real != NULL ? state(s) : NULL;
    return a != NULL && a->copy == real ? a->app : real;
}
