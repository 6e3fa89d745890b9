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
 * the bit is the shim's, a client handshake that starts with a session the
 * shim did not offer runs on a private copy of it, and the application's
 * object is never touched. The copy is made when the handshake starts, not
 * at SSL_set_session: until then the application may still change the
 * object it set, and OpenSSL would see the change (sslapitest's early-data
 * tests set a session's time after setting it). While the connection's
 * session is still that copy, SSL_get_session and SSL_get1_session answer
 * with the application's object, as without the shim; once tickets arrive,
 * OpenSSL has a new session, which they report as usual. */
#include <stdlib.h>

#include "appsess.h"
#include "ctx.h"
#include "exdata.h"
#include "session.h"
#include "settings.h"

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

/* OpenSSL marks a connection's session not resumable when the connection
 * ends unclean: freed or cleared without a shutdown sent, once its
 * handshake began (ssl_clear_bad_session, ssl/ssl_sess.c), or after a
 * fatal alert or an unexpected end (ssl/s3_msg.c, ssl/record/rec_layer_s3.c).
 * Without the shim that session is the application's object, and a program
 * that offers it again then makes a full handshake; with the shim it is the
 * copy, so the mark is carried over. A TLS 1.3 copy that is not resumable
 * says nothing: the shim's cache-mode bit marks it as its handshake ends.
 * SSL_free frees ex_data before it ends the connection in 3.0.19
 * (ssl/ssl_lib.c): this runs before the mark, and reads the state that will
 * make it. In 3.5.7 it frees ex_data after (ossl_ssl_connection_free ran
 * ssl_clear_bad_session, then freed the connection's session without
 * clearing the pointer, which is only compared here: the copy, of which
 * this holds a reference, alone can have that address), and the state
 * read is the same, not yet freed. */
static void carry_mark(const SSL *s, const struct appsess *a)
{
    if (a == NULL || a->app == NULL || R(SSL_get_session)(s) != a->copy)
        return;
    bool unclean = !(R(SSL_get_shutdown)(s) & SSL_SENT_SHUTDOWN) && !R(SSL_in_init)(s) &&
                   !R(SSL_in_before)(s);
    bool failed = !R(SSL_SESSION_is_resumable)(a->copy) && !session_is_tls13(a->copy);
    if (unclean || failed)
        R(SSL_CTX_remove_session)(R(SSL_get_SSL_CTX)(s), a->app);
}

static void free_appsess(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
    (void)ad, (void)idx, (void)argl, (void)argp;
    if (parent != NULL)
        carry_mark(parent, ptr);
    forget(ptr);
    free(ptr);
}

void appsess_init(void)
{
    appsess_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, exdata_dup_none,
                                               free_appsess);
}

static struct appsess *state(const SSL *s)
{
    return appsess_index >= 0 ? R(SSL_get_ex_data)(s, appsess_index) : NULL;
}

void appsess_clearing(const SSL *s)
{
    carry_mark(s, state(s));
}

void appsess_forget(SSL *s)
{
    forget(state(s));
}

void appsess_begin(SSL *s, SSL_SESSION *own)
{
    struct appsess *a = state(s);
    /* After SSL_clear the copy may still be the connection's session:
     * OpenSSL alone would offer the application's object again. */
    SSL_SESSION *app = a != NULL && own == a->copy ? a->app : own;
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    /* SSL_set_session would put another method on a connection whose
     * method the application changed. */
    if (!ctx_adds_client_cache(ctx) || !R(SSL_SESSION_is_resumable)(app) ||
        !settings_method_kept(s) || appsess_index < 0)
        return;
    if (a == NULL) {
        if ((a = calloc(1, sizeof *a)) == NULL)
            return;
        if (R(SSL_set_ex_data)(s, appsess_index, a) != 1) {
            free(a);
            return;
        }
    }
    SSL_SESSION *copy = R(SSL_SESSION_dup)(app);
    if (copy == NULL)
        return;
    R(SSL_SESSION_up_ref)(app);
    if (R(SSL_set_session)(s, copy) != 1) {
        R(SSL_SESSION_free)(copy);
        R(SSL_SESSION_free)(app);
        return;
    }
    forget(a);
    a->app = app;
    a->copy = copy;
}

SSL_SESSION *appsess_shown(const SSL *s, SSL_SESSION *real)
{
    const struct appsess *a = real != NULL ? state(s) : NULL;
    return a != NULL && a->copy == real ? a->app : real;
}
