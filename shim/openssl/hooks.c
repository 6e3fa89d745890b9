/* The exported OpenSSL entry points, and the one place that drives the
 * rooms of this side (ctx, conn, server, ocsp, appsess, trust, settings).
 * Each is a few lines around the real function.
 *
 * Handshakes start in many places: SSL_connect, SSL_do_handshake, and the
 * first SSL_read/SSL_write/SSL_peek of a connection put in connect state,
 * which run the handshake inside without calling SSL_do_handshake.
 * Debian's libssl calls its own exports through the PLT, so hooks nest
 * (SSL_connect reaches SSL_do_handshake, and in 3.5 SSL_write_ex reaches
 * SSL_write_ex2; objdump -d of Debian 12's 3.0.19 and Debian 13's 3.5.9):
 * conn_begin and conn_after are idempotent.
 *
 * SSL_free is not hooked: the shim's per-connection state is ex_data whose
 * free callback runs inside every SSL_free, including the ones libssl makes
 * itself, and needs nothing from the dying SSL. */
#include <stdlib.h>
#include <string.h>

#include "client/appsess.h"
#include "biossl.h"
#include "caller.h"
#include "certcb.h"
#include "client/conn.h"
#include "ctx.h"
#include "init.h"
#include "judge/judge.h"
#include "judge/ocsp.h"
#include "ledger.h"
#include "real.h"
#include "server/server.h"
#include "client/session.h"
#include "client/verdict.h"
#include "settings.h"
#include "judge/keyfacts.h"
#include "judge/sigcache.h"
#include "trust/trust.h"
#include "trust/trustdemand.h"
#include "util.h"
#include "judge/vtime.h"

#define EXPORT __attribute__((visibility("default")))

/* A call from a module bound to another copy of OpenSSL 3 goes to that
 * copy, untouched (caller.c), before anything else: such a caller must not
 * start the shim, which would find no system libssl yet. Then, if libssl 3
 * cannot be found at all, the call fails the way OpenSSL reports errors
 * rather than crash. */
#define FOREIGN(name, fn)                                                      \
    __typeof__(name) *fn = NULL;                                               \
    do {                                                                       \
        uintptr_t a_ = (uintptr_t)__builtin_return_address(0);                 \
        if (a_ - caller_native.lo >= caller_native.hi - caller_native.lo) {    \
            void *f_ = real_foreign((const void *)a_, IDX_##name);             \
            memcpy(&fn, &f_, sizeof fn);                                       \
        }                                                                      \
    } while (0)
#define REAL_OR(name, fail, args)                                              \
    do {                                                                       \
        FOREIGN(name, fn_);                                                    \
        if (fn_ != NULL)                                                       \
            return fn_ args;                                                   \
        if (ossl_##name == NULL && !real_find(#name, (void **)&ossl_##name))   \
            return fail;                                                       \
    } while (0)
#define REAL_OR_VOID(name, args)                                               \
    do {                                                                       \
        FOREIGN(name, fn_);                                                    \
        if (fn_ != NULL) {                                                     \
            fn_ args;                                                          \
            return;                                                            \
        }                                                                      \
        if (ossl_##name == NULL && !real_find(#name, (void **)&ossl_##name))   \
            return;                                                            \
    } while (0)

static void setup(SSL_CTX *ctx, OSSL_LIB_CTX *libctx, const char *propq)
{
    if (ctx_setup(ctx, libctx, propq) && ctx_may_serve(ctx))
        ctx_set_server_tickets(ctx, server_install(ctx));
}

/* A verify callback that suspends the handshake (SSL_set_retry_verify, a
 * macro over this call) suspends a judgment too (judge.c). Signature
 * algorithms are noted, here and on contexts (settings.h); SSL_CONF_cmd's
 * reach both through the PLT (ssl/ssl_conf.c of 3.0.19 and 3.5.7 call the
 * macros; objdump -d of Debian's libssl 3.0.19 and 3.5.9 shows the calls to
 * SSL_ctrl@plt and SSL_CTX_ctrl@plt). */
EXPORT long SSL_ctrl(SSL *s, int cmd, long larg, void *parg)
{
    REAL_OR(SSL_ctrl, 0, (s, cmd, larg, parg));
    if (cmd == SSL_CTRL_SET_RETRY_VERIFY && shim_started())
        judge_retry_asked(s);
    long ret = ossl_SSL_ctrl(s, cmd, larg, parg);
    struct recorded *rec = settings_sigalgs_cmd(cmd) && shim_active() ? settings_of(s) : NULL;
    if (rec != NULL)
        rec->sigalgs = true;
    return ret;
}

/* The application's own ticket keys win; the server mode's callback goes. */
static void own_tickets(SSL_CTX *ctx)
{
    if (ctx_own_tickets(ctx))
        server_remove(ctx);
}

EXPORT SSL_CTX *SSL_CTX_new_ex(OSSL_LIB_CTX *libctx, const char *propq, const SSL_METHOD *meth)
{
    REAL_OR(SSL_CTX_new_ex, NULL, (libctx, propq, meth));
    bool on = shim_active();
    SSL_CTX *ctx = ossl_SSL_CTX_new_ex(libctx, propq, meth);
    if (on)
        setup(ctx, libctx, propq);
    return ctx;
}

EXPORT SSL_CTX *SSL_CTX_new(const SSL_METHOD *meth)
{
    REAL_OR(SSL_CTX_new, NULL, (meth));
    bool on = shim_active();
    SSL_CTX *ctx = ossl_SSL_CTX_new(meth);
    if (on)
        setup(ctx, NULL, NULL);
    return ctx;
}

EXPORT long SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg)
{
    long ret;
    REAL_OR(SSL_CTX_ctrl, 0, (ctx, cmd, larg, parg));
    bool on = shim_active();
    if (on && (cmd == SSL_CTRL_SET_SESS_CACHE_MODE || cmd == SSL_CTRL_GET_SESS_CACHE_MODE) &&
        ctx_cache_mode(ctx, cmd, larg, &ret))
        return ret;
    /* Reading the context's ticket keys is how a server shares them with
     * its other contexts: they are the application's from then on. */
    if (on && (cmd == SSL_CTRL_SET_TLSEXT_TICKET_KEYS || cmd == SSL_CTRL_GET_TLSEXT_TICKET_KEYS))
        own_tickets(ctx);
    ret = ossl_SSL_CTX_ctrl(ctx, cmd, larg, parg);
    struct recorded *rec = on && settings_sigalgs_cmd(cmd) ? ctx_recorded(ctx) : NULL;
    if (rec != NULL)
        rec->sigalgs = true;
    /* The status callback the application set, not the shim's in its place. */
    if (on && cmd == SSL_CTRL_GET_TLSEXT_STATUS_REQ_CB)
        ocsp_hide_cb(ctx, parg);
    return ret;
}

/* A name callback or a ClientHello callback may move a server connection
 * to another context, whose client verification then decides (verdict.c,
 * server.c). OpenSSL 3.0 has no getter for either. */
static void picks_host(SSL_CTX *ctx, bool hello, bool on)
{
    struct recorded *rec = ctx_recorded(ctx);
    if (rec != NULL && hello)
        rec->hello_cb = on;
    else if (rec != NULL)
        rec->name_cb = on;
}

/* An application's own ticket-key callback: the older kind would lose to
 * the server mode's, which OpenSSL prefers; the newer kind replaces it. An
 * OCSP status callback: the shim's stands in for it (ocsp.c). */
EXPORT long SSL_CTX_callback_ctrl(SSL_CTX *ctx, int cmd, void (*fp)(void))
{
    long ret;
    REAL_OR(SSL_CTX_callback_ctrl, 0, (ctx, cmd, fp));
    if (cmd == SSL_CTRL_SET_TLSEXT_TICKET_KEY_CB && shim_active())
        own_tickets(ctx);
    if (cmd == SSL_CTRL_SET_TLSEXT_SERVERNAME_CB && shim_active())
        picks_host(ctx, false, fp != NULL);
    if (cmd == SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB && shim_active() && ocsp_set_cb(ctx, fp, &ret))
        return ret;
    return ossl_SSL_CTX_callback_ctrl(ctx, cmd, fp);
}

EXPORT int SSL_CTX_set_tlsext_ticket_key_evp_cb(SSL_CTX *ctx, shim_ticket_key_cb fp)
{
    REAL_OR(SSL_CTX_set_tlsext_ticket_key_evp_cb, 0, (ctx, fp));
    if (shim_active())
        own_tickets(ctx);
    return ossl_SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, fp);
}

EXPORT void SSL_CTX_set_client_hello_cb(SSL_CTX *c, SSL_client_hello_cb_fn cb, void *arg)
{
    REAL_OR_VOID(SSL_CTX_set_client_hello_cb, (c, cb, arg));
    if (shim_active())
        picks_host(c, true, cb != NULL);
    ossl_SSL_CTX_set_client_hello_cb(c, cb, arg);
}

/* The server mode's decrypt callback judges its own tickets and stands in
 * for the application's (server.c). */
EXPORT int SSL_CTX_set_session_ticket_cb(SSL_CTX *ctx, SSL_CTX_generate_session_ticket_fn gen_cb,
                                         SSL_CTX_decrypt_session_ticket_fn dec_cb, void *arg)
{
    REAL_OR(SSL_CTX_set_session_ticket_cb, 0, (ctx, gen_cb, dec_cb, arg));
    if (shim_active() && server_app_ticket_cb(ctx, gen_cb, dec_cb, arg))
        return 1;
    return ossl_SSL_CTX_set_session_ticket_cb(ctx, gen_cb, dec_cb, arg);
}

EXPORT void SSL_CTX_sess_set_new_cb(SSL_CTX *ctx, shim_new_session_cb cb)
{
    REAL_OR_VOID(SSL_CTX_sess_set_new_cb, (ctx, cb));
    if (shim_active() && ctx_set_app_cb(ctx, cb))
        return;
    ossl_SSL_CTX_sess_set_new_cb(ctx, cb);
}

EXPORT shim_new_session_cb SSL_CTX_sess_get_new_cb(SSL_CTX *ctx)
{
    shim_new_session_cb cb;
    REAL_OR(SSL_CTX_sess_get_new_cb, NULL, (ctx));
    bool on = shim_active();
    if (on && ctx_get_app_cb(ctx, &cb))
        return cb;
    return ossl_SSL_CTX_sess_get_new_cb(ctx);
}

EXPORT void SSL_CTX_set_cert_verify_callback(SSL_CTX *ctx, shim_cert_verify_cb cb, void *arg)
{
    REAL_OR_VOID(SSL_CTX_set_cert_verify_callback, (ctx, cb, arg));
    struct recorded *rec = shim_active() ? ctx_recorded(ctx) : NULL;
    if (rec != NULL) {
        rec->cert_verify_cb = cb;
        rec->cert_verify_arg = arg;
    }
    ossl_SSL_CTX_set_cert_verify_callback(ctx, cb, arg);
}

/* The trust store changing under a context invalidates its fingerprint;
 * certificates loaded lazily by verification inside a handshake do not.
 * An object of a name that entries of a trust file wait for joins the
 * store after them, as it would have after a full load (trustdemand.c);
 * and again after, for a file deferred meanwhile by another thread.
 * These are libcrypto functions, called by programs that never load libssl
 * too: they neither start the shim nor need it started. */
#define STORE_HOOK(name, type, lu, name_of)                                    \
    EXPORT int name(X509_STORE *store, type *x)                                \
    {                                                                          \
        REAL_OR(name, 0, (store, x));                                          \
        const X509_NAME *nm_ = x != NULL && demand_on() ? R(name_of)(x) : NULL;  \
        demand_need(store, lu, nm_);                                           \
        int r = ossl_##name(store, x);                                         \
        demand_need(store, lu, nm_);                                           \
        demand_added(store);                                                   \
        if (r == 1 && !in_handshake() && shim_started())                      \
            trust_changed(store);                                              \
        return r;                                                              \
    }

/* CA directories (and URI stores) load lazily, so the store's objects do not
 * reveal them: the locations themselves join the fingerprint. A file shows
 * in the objects, or, taken on demand, in its content's fingerprint
 * (trustdemand.h). */
static void lookup_added(X509_LOOKUP *lu, int cmd, const char *argc, long argl, int r)
{
    if (r != 1 || !shim_started() || (cmd != X509_L_ADD_DIR && cmd != X509_L_ADD_STORE))
        return;
    if (cmd == X509_L_ADD_DIR && argl == X509_FILETYPE_DEFAULT) {
        const char *env = secure_getenv("SSL_CERT_DIR");
        argc = env != NULL ? env : "(default)";
    }
    trust_lookup(R(X509_LOOKUP_get_store)(lu), cmd, argc);
}

/* Code of the program's own put in place of libcrypto's runs inside every
 * verification, the judge's too (trust_program_code): a lookup method
 * other than libcrypto's file, directory and OSSL_STORE ones (its default
 * paths add those three: x509_d2.c, 3.0.20 and 3.5.7), and a purpose or
 * trust check (global tables; tests/tzpurpose.c). */
EXPORT X509_LOOKUP *X509_STORE_add_lookup(X509_STORE *v, X509_LOOKUP_METHOD *m)
{
    REAL_OR(X509_STORE_add_lookup, NULL, (v, m));
    if (m != NULL && m != R(X509_LOOKUP_file)() && m != R(X509_LOOKUP_hash_dir)() &&
        m != R(X509_LOOKUP_store)())
        trust_program_code();
    return ossl_X509_STORE_add_lookup(v, m);
}

EXPORT int X509_PURPOSE_add(int id, int trust, int flags, shim_purpose_check ck,
                            const char *name, const char *sname, void *arg)
{
    REAL_OR(X509_PURPOSE_add, 0, (id, trust, flags, ck, name, sname, arg));
    trust_program_code();
    return ossl_X509_PURPOSE_add(id, trust, flags, ck, name, sname, arg);
}

EXPORT int X509_TRUST_add(int id, int flags, shim_trust_check ck, const char *name, int arg1,
                          void *arg2)
{
    REAL_OR(X509_TRUST_add, 0, (id, flags, ck, name, arg1, arg2));
    trust_program_code();
    return ossl_X509_TRUST_add(id, flags, ck, name, arg1, arg2);
}

EXPORT shim_trust_default X509_TRUST_set_default(shim_trust_default trust)
{
    REAL_OR(X509_TRUST_set_default, NULL, (trust));
    trust_program_code();
    return ossl_X509_TRUST_set_default(trust);
}

EXPORT int X509_LOOKUP_ctrl_ex(X509_LOOKUP *lu, int cmd, const char *argc, long argl, char **ret,
                               OSSL_LIB_CTX *libctx, const char *propq)
{
    REAL_OR(X509_LOOKUP_ctrl_ex, 0, (lu, cmd, argc, argl, ret, libctx, propq));
    int r = ossl_X509_LOOKUP_ctrl_ex(lu, cmd, argc, argl, ret, libctx, propq);
    lookup_added(lu, cmd, argc, argl, r);
    return r;
}

EXPORT int X509_LOOKUP_ctrl(X509_LOOKUP *lu, int cmd, const char *argc, long argl, char **ret)
{
    REAL_OR(X509_LOOKUP_ctrl, 0, (lu, cmd, argc, argl, ret));
    int r = ossl_X509_LOOKUP_ctrl(lu, cmd, argc, argl, ret);
    lookup_added(lu, cmd, argc, argl, r);
    return r;
}

/* A certificate's signature checked inside a handshake or a judgment:
 * once is enough for the same certificate and key (sigcache.c). */
EXPORT int X509_verify(X509 *a, EVP_PKEY *r)
{
    REAL_OR(X509_verify, -1, (a, r));
    if (!in_handshake() || !shim_started())
        return ossl_X509_verify(a, r);
    return sigcache_verify(a, r, ossl_X509_verify);
}

/* A validity time checked inside a handshake or a judgment: each
 * certificate's times read once (vtime.c). */
EXPORT int X509_cmp_time(const ASN1_TIME *ctm, time_t *cmp_time)
{
    REAL_OR(X509_cmp_time, 0, (ctm, cmp_time));
    if (!in_handshake() || !shim_started())
        return ossl_X509_cmp_time(ctm, cmp_time);
    return vtime_cmp(ctm, cmp_time, ossl_X509_cmp_time);
}

/* An address to check: from now on the key asks parameters for one
 * (verdict.c). */
EXPORT int X509_VERIFY_PARAM_set1_ip(X509_VERIFY_PARAM *param, const unsigned char *ip,
                                     size_t iplen)
{
    REAL_OR(X509_VERIFY_PARAM_set1_ip, 0, (param, ip, iplen));
    if (ip != NULL && iplen != 0)
        verdict_ip_given();
    return ossl_X509_VERIFY_PARAM_set1_ip(param, ip, iplen);
}

/* libssl's SSL_set1_host tries every name as an address first: only one
 * that parses is an address set (no other thread may read parameters a
 * setter is changing, so this comes before any reads them). */
EXPORT int X509_VERIFY_PARAM_set1_ip_asc(X509_VERIFY_PARAM *param, const char *ipasc)
{
    REAL_OR(X509_VERIFY_PARAM_set1_ip_asc, 0, (param, ipasc));
    int r = ossl_X509_VERIFY_PARAM_set1_ip_asc(param, ipasc);
    if (r == 1)
        verdict_ip_given();
    return r;
}

/* What the judge's verification asks of a certificate's key: a yes kept
 * for the same key (keyfacts.c). */
EXPORT int EVP_PKEY_is_a(const EVP_PKEY *pkey, const char *name)
{
    REAL_OR(EVP_PKEY_is_a, 0, (pkey, name));
    return keyfacts_is_a(pkey, name, ossl_EVP_PKEY_is_a);
}

EXPORT int EVP_PKEY_get_int_param(const EVP_PKEY *pkey, const char *key_name, int *out)
{
    REAL_OR(EVP_PKEY_get_int_param, 0, (pkey, key_name, out));
    return keyfacts_get_int_param(pkey, key_name, out, ossl_EVP_PKEY_get_int_param);
}

STORE_HOOK(X509_STORE_add_cert, X509, X509_LU_X509, X509_get_subject_name)
STORE_HOOK(X509_STORE_add_crl, X509_CRL, X509_LU_CRL, X509_CRL_get_issuer)

/* Trust on demand (trustdemand.h): a CA file indexed before is not parsed
 * at load, and every search of a store, and every handing out of its
 * objects, first brings in what it may find. Debian's libcrypto calls each
 * of these through its PLT (objdump -d): by_file_ctrl_ex the loader,
 * X509_STORE_CTX_get1_issuer, _get1_certs, _get1_crls and
 * _get_obj_by_subject the search, the search the lookups', by_store and
 * X509_STORE_get1_all_certs the objects. */
EXPORT int X509_load_cert_crl_file_ex(X509_LOOKUP *lu, const char *file, int type,
                                      OSSL_LIB_CTX *libctx, const char *propq)
{
    REAL_OR(X509_load_cert_crl_file_ex, 0, (lu, file, type, libctx, propq));
    int r;
    if (shim_started() && demand_load_file(lu, file, type, libctx, propq, &r)) {
        if (!in_handshake())
            trust_changed(R(X509_LOOKUP_get_store)(lu));
        return r;
    }
    return ossl_X509_load_cert_crl_file_ex(lu, file, type, libctx, propq);
}

EXPORT int X509_STORE_CTX_get_by_subject(const X509_STORE_CTX *vs, X509_LOOKUP_TYPE type,
                                         const X509_NAME *name, X509_OBJECT *ret)
{
    REAL_OR(X509_STORE_CTX_get_by_subject, 0, (vs, type, name, ret));
    if (vs != NULL && demand_on())
        demand_need(R(X509_STORE_CTX_get0_store)(vs), type, name);
    return ossl_X509_STORE_CTX_get_by_subject(vs, type, name, ret);
}

EXPORT int X509_LOOKUP_by_subject_ex(X509_LOOKUP *lu, X509_LOOKUP_TYPE type,
                                     const X509_NAME *name, X509_OBJECT *ret,
                                     OSSL_LIB_CTX *libctx, const char *propq)
{
    REAL_OR(X509_LOOKUP_by_subject_ex, 0, (lu, type, name, ret, libctx, propq));
    if (lu != NULL && demand_on())
        demand_need(R(X509_LOOKUP_get_store)(lu), type, name);
    return ossl_X509_LOOKUP_by_subject_ex(lu, type, name, ret, libctx, propq);
}

EXPORT int X509_LOOKUP_by_subject(X509_LOOKUP *lu, X509_LOOKUP_TYPE type, const X509_NAME *name,
                                  X509_OBJECT *ret)
{
    REAL_OR(X509_LOOKUP_by_subject, 0, (lu, type, name, ret));
    if (lu != NULL && demand_on())
        demand_need(R(X509_LOOKUP_get_store)(lu), type, name);
    return ossl_X509_LOOKUP_by_subject(lu, type, name, ret);
}

EXPORT STACK_OF(X509_OBJECT) *X509_STORE_get0_objects(const X509_STORE *store)
{
    REAL_OR(X509_STORE_get0_objects, NULL, (store));
    if (store != NULL && shim_started())
        demand_handed((X509_STORE *)store, __builtin_return_address(0));
    return ossl_X509_STORE_get0_objects(store);
}

EXPORT STACK_OF(X509) *X509_STORE_get1_all_certs(X509_STORE *store)
{
    REAL_OR(X509_STORE_get1_all_certs, NULL, (store));
    if (store != NULL && demand_on())
        demand_need_all(store, false);
    return ossl_X509_STORE_get1_all_certs(store);
}

EXPORT int SSL_CTX_set_session_id_context(SSL_CTX *ctx, const unsigned char *sid,
                                          unsigned int len)
{
    REAL_OR(SSL_CTX_set_session_id_context, 0, (ctx, sid, len));
    bool on = shim_active();
    int r = ossl_SSL_CTX_set_session_id_context(ctx, sid, len);
    if (on && r == 1)
        settings_set_sid(ctx_recorded(ctx), sid, len);
    return r;
}

EXPORT int SSL_set_session_id_context(SSL *s, const unsigned char *sid, unsigned int len)
{
    REAL_OR(SSL_set_session_id_context, 0, (s, sid, len));
    bool on = shim_active();
    int r = ossl_SSL_set_session_id_context(s, sid, len);
    if (on && r == 1)
        settings_set_sid(settings_of(s), sid, len);
    return r;
}

/* Purpose and trust settings, which OpenSSL 3.0 cannot report back. */
#define RECORD_HOOK(name, type, obj, recorded, which)                          \
    EXPORT int name(type *obj, int value)                                      \
    {                                                                          \
        REAL_OR(name, 0, (obj, value));                                        \
        bool on = shim_active();                                               \
        int r = ossl_##name(obj, value);                                       \
        if (on && r == 1)                                                      \
            settings_set_int(recorded(obj), which, value);                           \
        return r;                                                              \
    }

RECORD_HOOK(SSL_CTX_set_purpose, SSL_CTX, ctx, ctx_recorded, SET_PURPOSE)
RECORD_HOOK(SSL_set_purpose, SSL, s, settings_of, SET_PURPOSE)
RECORD_HOOK(SSL_CTX_set_trust, SSL_CTX, ctx, ctx_recorded, SET_TRUST)
RECORD_HOOK(SSL_set_trust, SSL, s, settings_of, SET_TRUST)

/* Callbacks that choose the client's PSK, which OpenSSL cannot report
 * back, and a context's certificate callback (below): a connection with
 * one is never offered a session (verdict.c). */
#define IDENTITY_HOOK(name, type, obj, settings, params, args)                 \
    EXPORT void name params                                                    \
    {                                                                          \
        REAL_OR_VOID(name, args);                                              \
        struct recorded *r = cb != NULL && shim_active() ? settings(obj) : NULL; \
        if (r != NULL)                                                         \
            r->identity_cb = true;                                             \
        ossl_##name args;                                                      \
    }

IDENTITY_HOOK(SSL_CTX_set_psk_client_callback, SSL_CTX, ctx, ctx_recorded,
              (SSL_CTX *ctx, SSL_psk_client_cb_func cb), (ctx, cb))
IDENTITY_HOOK(SSL_set_psk_client_callback, SSL, s, settings_of,
              (SSL *s, SSL_psk_client_cb_func cb), (s, cb))
IDENTITY_HOOK(SSL_CTX_set_psk_use_session_callback, SSL_CTX, ctx, ctx_recorded,
              (SSL_CTX *ctx, SSL_psk_use_session_cb_func cb), (ctx, cb))
IDENTITY_HOOK(SSL_set_psk_use_session_callback, SSL, s, settings_of,
              (SSL *s, SSL_psk_use_session_cb_func cb), (s, cb))

IDENTITY_HOOK(SSL_CTX_set_cert_cb, SSL_CTX, ctx, ctx_recorded,
              (SSL_CTX *ctx, shim_cert_cb cb, void *arg), (ctx, cb, arg))

/* A client-certificate engine means no resumption (settings.h). libssl never
 * calls this itself (objdump -d of Debian's 3.0.19 and 3.5.9). */
EXPORT int SSL_CTX_set_client_cert_engine(SSL_CTX *ctx, ENGINE *e)
{
    REAL_OR(SSL_CTX_set_client_cert_engine, 0, (ctx, e));
    int ret = ossl_SSL_CTX_set_client_cert_engine(ctx, e);
    struct recorded *rec = ret == 1 && shim_active() ? ctx_recorded(ctx) : NULL;
    if (rec != NULL)
        rec->engine = true;
    return ret;
}

/* A context's certificate callback counts as one (above): the connections
 * made before it was set have none, and no hook can tell which (certcb.c).
 * A connection's own runs through a trampoline that tells when it runs. */
EXPORT void SSL_set_cert_cb(SSL *s, shim_cert_cb cb, void *arg)
{
    REAL_OR_VOID(SSL_set_cert_cb, (s, cb, arg));
    struct recorded *r = shim_active() ? settings_of(s) : NULL;
    if (r != NULL)
        r->cert_fn = cb;
    ossl_SSL_set_cert_cb(s, r != NULL && cb != NULL ? certcb_trampoline : cb, arg);
}

/* A connection moved to another context takes its certificate settings,
 * and with them its certificate callback (ssl/ssl_lib.c: ssl_cert_dup of
 * the new context's; none when it is the same context: checked, a
 * connection's own callback stays then and goes with another). */
EXPORT SSL_CTX *SSL_set_SSL_CTX(SSL *s, SSL_CTX *ctx)
{
    REAL_OR(SSL_set_SSL_CTX, NULL, (s, ctx));
    SSL_CTX *before = s != NULL && shim_active() ? R(SSL_get_SSL_CTX)(s) : NULL;
    SSL_CTX *r = ossl_SSL_set_SSL_CTX(s, ctx);
    /* NULL stands for the session context, but the settings are replaced
     * even when that is the context the connection had (ssl/ssl_lib.c
     * compares before it substitutes). */
    struct recorded *rec = before != NULL && r != NULL && ctx != before ? settings_of(s) : NULL;
    if (rec != NULL) {
        rec->cert_fn = NULL;
        rec->moved = true;
    }
    return r;
}

/* A handshake may start: a server's is the server mode's (once, at the
 * outermost hook: SSL_accept reaches SSL_do_handshake), a client's the
 * connection's. */
static void begin(SSL *s, bool client)
{
    if (!R(SSL_in_before)(s))
        return;
    if (client || !R(SSL_is_server)(s))
        conn_begin(s);
    else if (shim_serving() && !in_handshake())
        server_begin(s);
}

/* A handshake that ends inside SSL_read or SSL_write moves data in the
 * same call (ssl3_read_bytes and ssl3_write_bytes run it through the
 * handshake function, not SSL_do_handshake), before the judge could
 * refuse the connection. One resuming a session the shim offered is run
 * alone first: a failure returns as the data call would return it (-1,
 * or 0 for the _ex calls, whatever the handshake returned), and the data
 * call follows a handshake that ended and was judged. */
static bool run_alone(SSL *s)
{
    if (!conn_offer_pending(s))
        return true;
    if (ossl_SSL_do_handshake == NULL &&
        !real_find("SSL_do_handshake", (void **)&ossl_SSL_do_handshake))
        return true;
    handshake_enter();
    int r = ossl_SSL_do_handshake(s);
    handshake_leave();
    return !conn_after(s, r, IO_HANDSHAKE) && r > 0;
}

/* The handshake entry points: begin (offer) before, notice the end after. */
#define ENTRY(name, client, io, fail, params, args)                         \
    EXPORT int name params                                                     \
    {                                                                          \
        REAL_OR(name, fail, args);                                             \
        bool on = shim_active() && !(conn_is_quiet(s) && !R(SSL_in_before)(s)); \
        if (on)                                                                \
            begin(s, client);                                                  \
        if (on && io != IO_HANDSHAKE && !run_alone(s))                         \
            return fail;                                                       \
        handshake_enter();                                                     \
        int r = ossl_##name args;                                              \
        handshake_leave();                                                     \
        if (on && conn_after(s, r, io))                                        \
            return fail;                                                       \
        return r;                                                              \
    }

ENTRY(SSL_connect, true, IO_HANDSHAKE, -1, (SSL *s), (s))
ENTRY(SSL_do_handshake, false, IO_HANDSHAKE, -1, (SSL *s), (s))
ENTRY(SSL_accept, false, IO_HANDSHAKE, -1, (SSL *s), (s))
ENTRY(SSL_read, false, IO_READ, -1, (SSL *s, void *buf, int num), (s, buf, num))
ENTRY(SSL_read_ex, false, IO_READ, 0, (SSL *s, void *buf, size_t num, size_t *got),
      (s, buf, num, got))
ENTRY(SSL_peek, false, IO_READ, -1, (SSL *s, void *buf, int num), (s, buf, num))
ENTRY(SSL_peek_ex, false, IO_READ, 0, (SSL *s, void *buf, size_t num, size_t *got),
      (s, buf, num, got))
ENTRY(SSL_write, false, IO_WRITE, -1, (SSL *s, const void *buf, int num), (s, buf, num))
ENTRY(SSL_write_ex, false, IO_WRITE, 0, (SSL *s, const void *buf, size_t num, size_t *put),
      (s, buf, num, put))
ENTRY(SSL_write_ex2, false, IO_WRITE, 0,
      (SSL *s, const void *buf, size_t num, uint64_t flags, size_t *put), (s, buf, num, flags, put))

/* An SSL BIO's reads and writes, which libssl makes without SSL_read or
 * SSL_write (biossl.c): the same steps as ENTRY, a pending resumed
 * handshake run alone through BIO_do_handshake, which sets the BIO's
 * retry flags as a read or write would. */
static SSL *bio_ssl(BIO *b)
{
    SSL *s = NULL;
    biossl_real.ctrl(b, BIO_C_GET_SSL, 0, &s);
    return s;
}

static long bio_before(BIO *b, SSL *s, bool *on)
{
    *on = s != NULL && shim_active() && !(conn_is_quiet(s) && !R(SSL_in_before)(s));
    if (!*on)
        return 1;
    begin(s, false);
    return conn_offer_pending(s) ? biossl_real.ctrl(b, BIO_C_DO_STATE_MACHINE, 0, NULL) : 1;
}

static int bio_io(BIO *b, enum io io, void *buf, size_t size, size_t *done)
{
    SSL *s = bio_ssl(b);
    bool on;
    long h = bio_before(b, s, &on);
    if (h <= 0) {
        *done = 0;
        return (int)h;
    }
    handshake_enter();
    int r = io == IO_READ ? biossl_real.read(b, buf, size, done)
                          : biossl_real.write(b, buf, size, done);
    handshake_leave();
    return on && conn_after(s, r, io) ? 0 : r;
}

static int bio_read(BIO *b, char *buf, size_t size, size_t *got)
{
    return bio_io(b, IO_READ, buf, size, got);
}

static int bio_write(BIO *b, const char *buf, size_t size, size_t *put)
{
    return bio_io(b, IO_WRITE, (void *)buf, size, put);
}

EXPORT const BIO_METHOD *BIO_f_ssl(void)
{
    REAL_OR(BIO_f_ssl, NULL, ());
    const BIO_METHOD *real = ossl_BIO_f_ssl();
    const BIO_METHOD *ours = shim_active() ? biossl_method(real, bio_read, bio_write) : NULL;
    return ours != NULL ? ours : real;
}

EXPORT int SSL_clear(SSL *s)
{
    REAL_OR(SSL_clear, 0, (s));
    bool on = shim_active();
    bool settle = on && conn_clearing(s);
    if (on)
        appsess_clearing(s);
    int r = ossl_SSL_clear(s);
    if (settle)
        conn_cleared(s);
    return r;
}

/* A program shuts a connection down when it has done with it, or before
 * it reuses it (conn_shutdown). */
EXPORT int SSL_shutdown(SSL *s)
{
    REAL_OR(SSL_shutdown, -1, (s));
    int r = ossl_SSL_shutdown(s);
    if (s != NULL && shim_started())
        conn_shutdown(s);
    return r;
}

/* A TLS 1.3 ticket the application offers itself must leave every pool at
 * once: another thread may be about to take it. */
EXPORT int SSL_set_session(SSL *s, SSL_SESSION *sess)
{
    REAL_OR(SSL_set_session, 0, (s, sess));
    bool on = shim_active();
    if (on && sess != NULL && session_is_tls13(sess))
        ledger_disown(NULL, &ossl_ops, sess);
    if (on)
        appsess_forget(s);
    return ossl_SSL_set_session(s, sess);
}

EXPORT SSL_SESSION *SSL_get_session(const SSL *s)
{
    REAL_OR(SSL_get_session, NULL, (s));
    SSL_SESSION *sess = ossl_SSL_get_session(s);
    return shim_started() ? appsess_shown(s, sess) : sess;
}

/* An application that takes a TLS 1.3 session to offer it again itself
 * owns that ticket from now on; the pool must not hand it out too. */
EXPORT SSL_SESSION *SSL_get1_session(SSL *s)
{
    REAL_OR(SSL_get1_session, NULL, (s));
    bool on = shim_active();
    SSL_SESSION *sess = ossl_SSL_get1_session(s);
    if (!on)
        return sess;
    SSL_SESSION *shown = appsess_shown(s, sess);
    if (shown != sess) {
        R(SSL_SESSION_up_ref)(shown);
        R(SSL_SESSION_free)(sess);
    }
    conn_app_took(s, shown);
    return shown;
}


/* A ticket the application serializes may be offered again by it, in
 * this process, a child, or a later one (curl's --ssl-sessions file, a
 * Node program that saves its session events): it is the program's, and
 * the shim never offers it (core/ledger.h). */
EXPORT int i2d_SSL_SESSION(const SSL_SESSION *in, unsigned char **pp)
{
    REAL_OR(i2d_SSL_SESSION, 0, (in, pp));
    if (in != NULL && shim_started() && session_is_tls13(in))
        ledger_serialized(&ossl_ops, in);
    return ossl_i2d_SSL_SESSION(in, pp);
}

/* A resumed connection has no verified chain of its own (libssl builds one
 * only when it verifies): the judge's, which a full handshake would have
 * left. */
EXPORT STACK_OF(X509) *SSL_get0_verified_chain(const SSL *s)
{
    REAL_OR(SSL_get0_verified_chain, NULL, (s));
    STACK_OF(X509) *chain = ossl_SSL_get0_verified_chain(s);
    if (chain == NULL && s != NULL && shim_started())
        chain = conn_verified_chain(s);
    return chain;
}

/* A connection resumed from the store: OpenSSL restores the peer's leaf
 * but not its chain, which programs read after the handshake (curl's
 * certificate info fails without one). The chain verified by the full
 * handshake behind the session is kept with it. */
EXPORT STACK_OF(X509) *SSL_get_peer_cert_chain(const SSL *s)
{
    REAL_OR(SSL_get_peer_cert_chain, NULL, (s));
    STACK_OF(X509) *chain = ossl_SSL_get_peer_cert_chain(s);
    if (chain == NULL && s != NULL && shim_started())
        chain = conn_peer_chain(s);
    return chain;
}
