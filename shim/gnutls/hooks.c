/* The exported GnuTLS entry points, under GnuTLS's own symbol versions
 * (hooks.def; the version script names exactly these), and the one place
 * that drives this side's rooms (conn, cred, prio). Each is a few lines
 * around the real function. A program without GnuTLS never calls them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn/conn.h"
#include "cred/cred.h"
#include "hook.h"
#include "init.h"
#include "log.h"
#include "prio.h"
#include "cred/psk.h"
#include "real.h"
#include "util.h"
#include "judge/vmemo.h"
#include "trust/tdemand.h"


/* A client session is followed from here on. GNUTLS_NO_TICKETS would keep
 * it from offering the shim's tickets (libcurl sets it, and cannot use
 * TLS 1.3 tickets itself: it asks for the session data before any has
 * arrived, measured), so it is cleared; the key keeps the program's flags. */
EXPORT int gnutls_init(gnutls_session_t *session, unsigned int flags)
{
    REAL_OR(gnutls_init, GNUTLS_E_INTERNAL_ERROR);
    /* GNUTLS_SERVER wins over GNUTLS_CLIENT (lib/state.c, gnutls_init, in
     * 3.7.9 and 3.8.9): such a session is a server's. */
    bool on = (flags & GNUTLS_CLIENT) && !(flags & GNUTLS_SERVER) && gshim_active();
    int r = real_(session, on ? flags & ~(unsigned)GNUTLS_NO_TICKETS : flags);
    if (on && r == 0)
        gconn_new(*session, flags);
    return r;
}

EXPORT void gnutls_deinit(gnutls_session_t session)
{
    REAL_OR_VOID(gnutls_deinit);
    if (session != NULL && gshim_active())
        gconn_free(session);
    real_(session);
}

/* A handshake that resumed the shim's session returns success only once
 * the check it skipped passed (conn/handshake.c, judge/judge.c). The
 * judgment counts as part of the handshake (the signature checks it
 * repeats are kept, judge/sigmemo.c). */
EXPORT int gnutls_handshake(gnutls_session_t session)
{
    REAL_OR(gnutls_handshake, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    int held;
    if (on && gconn_begin(session, &held))
        return held;
    handshake_enter();
    int r = real_(session);
    if (on)
        r = gconn_after(session, r);
    handshake_leave();
    return r;
}

EXPORT void gnutls_handshake_set_hook_function(gnutls_session_t session, unsigned int htype,
                                               int when, gnutls_handshake_hook_func func)
{
    REAL_OR_VOID(gnutls_handshake_set_hook_function);
    if (gshim_active() && gconn_app_hook(session, htype, when, func))
        return;
    real_(session, htype, when, func);
}

EXPORT int gnutls_session_set_data(gnutls_session_t session, const void *data, size_t size)
{
    REAL_OR(gnutls_session_set_data, GNUTLS_E_INTERNAL_ERROR);
    /* A ticket the shim offered first (another process took it from the
     * store) is not offered again: the handshake is a full one, as if the
     * server had refused it. */
    if (gshim_active() && !gconn_app_set(session, data, size)) {
        LOG(LOG_DEBUG, "the application offers a ticket offered already; it offers none");
        return 0;
    }
    return real_(session, data, size);
}

EXPORT int gnutls_session_get_data(gnutls_session_t session, void *data, size_t *size)
{
    REAL_OR(gnutls_session_get_data, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, data, size);
    if (r == 0 && data != NULL && size != NULL && gshim_active())
        gconn_app_took(session, data, *size);
    return r;
}

EXPORT int gnutls_session_get_data2(gnutls_session_t session, gnutls_datum_t *data)
{
    REAL_OR(gnutls_session_get_data2, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, data);
    if (r == 0 && data != NULL && gshim_active())
        gconn_app_took(session, data->data, data->size);
    return r;
}

/* The check set_verify_cert installs is GnuTLS's own verify function: it
 * calls gnutls_session_set_verify_function, which reaches the hook below
 * (measured), in place of any the program set before. The hook learns the
 * function from inside the call; the data and flags are recorded after. */
static _Thread_local bool in_verify_cert, verify_fn_seen;

EXPORT void gnutls_session_set_verify_cert(gnutls_session_t session, const char *hostname,
                                           unsigned flags)
{
    REAL_OR_VOID(gnutls_session_set_verify_cert);
    in_verify_cert = true;
    verify_fn_seen = false;
    real_(session, hostname, flags);
    in_verify_cert = false;
    if (gshim_active())
        gconn_verify_cert(session, hostname, NULL, 0, flags, verify_fn_seen, false);
}

EXPORT void gnutls_session_set_verify_cert2(gnutls_session_t session, gnutls_typed_vdata_st *data,
                                            unsigned elements, unsigned flags)
{
    REAL_OR_VOID(gnutls_session_set_verify_cert2);
    in_verify_cert = true;
    verify_fn_seen = false;
    real_(session, data, elements, flags);
    in_verify_cert = false;
    if (gshim_active())
        gconn_verify_cert(session, NULL, data, elements, flags, verify_fn_seen, true);
}

EXPORT void gnutls_session_set_verify_function(gnutls_session_t session,
                                               gnutls_certificate_verify_function *func)
{
    REAL_OR_VOID(gnutls_session_set_verify_function);
    bool inner = in_verify_cert;
    verify_fn_seen |= inner;
    if (gshim_active())
        gconn_verify_function(session, func, inner);
    real_(session, func);
}

/* Priorities, whichever way they are set. */
EXPORT int gnutls_priority_set_direct(gnutls_session_t session, const char *priorities,
                                      const char **err_pos)
{
    REAL_OR(gnutls_priority_set_direct, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, priorities, err_pos);
    if (r == 0 && gshim_active())
        gconn_priority(session, priorities != NULL ? priorities : "\001default", false);
    return r;
}

EXPORT int gnutls_set_default_priority(gnutls_session_t session)
{
    REAL_OR(gnutls_set_default_priority, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session);
    if (r == 0 && gshim_active())
        gconn_priority(session, "\001default", false);
    return r;
}

EXPORT int gnutls_set_default_priority_append(gnutls_session_t session, const char *add_prio,
                                              const char **err_pos, unsigned flags)
{
    REAL_OR(gnutls_set_default_priority_append, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, add_prio, err_pos, flags);
    if (r == 0 && gshim_active()) {
        char text[512];
        size_t n = add_prio != NULL ? strlen(add_prio) : 0;
        bool fits = n + 10 < sizeof text;
        if (fits)
            memcpy(text, "\001default:", 9), memcpy(text + 9, add_prio != NULL ? add_prio : "", n + 1);
        gconn_priority(session, fits ? text : NULL, false);
    }
    return r;
}

EXPORT int gnutls_priority_set(gnutls_session_t session, gnutls_priority_t priority)
{
    REAL_OR(gnutls_priority_set, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, priority);
    if (r == 0 && gshim_active()) {
        char *text = prio_text(priority);
        gconn_priority(session, text, true);
        free(text);
    }
    return r;
}

EXPORT int gnutls_priority_init(gnutls_priority_t *priority, const char *priorities,
                                const char **err_pos)
{
    REAL_OR(gnutls_priority_init, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    bool absent = on && vmemo_config_absent();
    int r = real_(priority, priorities, err_pos);
    if (on)
        vmemo_config_read(absent);
    if (r == 0 && on)
        prio_made(*priority, priorities != NULL ? priorities : "\001default");
    return r;
}

EXPORT int gnutls_priority_init2(gnutls_priority_t *priority, const char *priorities,
                                 const char **err_pos, unsigned flags)
{
    REAL_OR(gnutls_priority_init2, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    bool absent = on && vmemo_config_absent();
    int r = real_(priority, priorities, err_pos, flags);
    if (on)
        vmemo_config_read(absent);
    if (r == 0 && on) {
        /* GNUTLS_PRIORITY_INIT_DEF_APPEND: the string adds to the defaults. */
        char *text = malloc((priorities != NULL ? strlen(priorities) : 0) + 32);
        if (text != NULL)
            sprintf(text, "\001%u:%s", flags, priorities != NULL ? priorities : "");
        prio_made(*priority, text);
        free(text);
    }
    return r;
}

/* An initialisation that starts GnuTLS again (the program ended every one
 * before, or none was implicit) loads the system configuration outside
 * any priority's (lib/global.c, _gnutls_global_init: the file's overrides,
 * insecure signatures and hashes among them, applied to GnuTLS's tables at
 * once; 3.7.9 and 3.8.9), and GnuTLS keeps them should the file go. */
EXPORT int gnutls_global_init(void)
{
    REAL_OR(gnutls_global_init, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    bool absent = on && vmemo_config_absent();
    int r = real_();
    if (on)
        vmemo_config_read(absent);
    return r;
}

EXPORT void gnutls_priority_deinit(gnutls_priority_t priority)
{
    REAL_OR_VOID(gnutls_priority_deinit);
    if (gshim_active())
        prio_gone(priority);
    real_(priority);
}

EXPORT int gnutls_server_name_set(gnutls_session_t session, gnutls_server_name_type_t type,
                                  const void *name, size_t len)
{
    REAL_OR(gnutls_server_name_set, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, type, name, len);
    if (r == 0 && type == GNUTLS_NAME_DNS && gshim_active())
        gconn_server_name(session, name, len);
    return r;
}

/* Transport functions of the program's own: no socket the shim can read. */
#define TRANSPORT_HOOK(name, type)                                             \
    EXPORT void name(gnutls_session_t session, type fn)                        \
    {                                                                          \
        REAL_OR_VOID(name);                                        \
        if (gshim_active())                                                    \
            gconn_own_transport(session);                                      \
        real_(session, fn);                                              \
    }
TRANSPORT_HOOK(gnutls_transport_set_push_function, gnutls_push_func)
TRANSPORT_HOOK(gnutls_transport_set_vec_push_function, gnutls_vec_push_func)
TRANSPORT_HOOK(gnutls_transport_set_pull_function, gnutls_pull_func)

/* Certificate credentials, as they are built. */
EXPORT int gnutls_certificate_allocate_credentials(gnutls_certificate_credentials_t *res)
{
    REAL_OR(gnutls_certificate_allocate_credentials, GNUTLS_E_MEMORY_ERROR);
    int r = real_(res);
    if (r == 0 && gshim_active()) {
        cred_new(*res);
        tdemand_cred_new(*res);
    }
    return r;
}

EXPORT void gnutls_certificate_free_credentials(gnutls_certificate_credentials_t sc)
{
    REAL_OR_VOID(gnutls_certificate_free_credentials);
    if (gshim_active()) {
        cred_gone(sc);
        tdemand_cred_gone(sc);
    }
    real_(sc);
}

/* The system's trust: Debian's GnuTLS (3.7.9 and 3.8.9) reads it from one
 * bundle (its library names /etc/ssl/certs/ca-certificates.crt; as many
 * certificates loaded as the bundle holds), whose identity stands for it. */
#define SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

EXPORT int gnutls_certificate_set_x509_system_trust(gnutls_certificate_credentials_t cred)
{
    REAL_OR(gnutls_certificate_set_x509_system_trust, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    if (on)
        cred_changing(cred);
    int r = real_(cred);
    if (on)
        cred_changed(cred, false);
    if (r >= 0 && on)
        cred_trust_file(cred, 'S', SYSTEM_BUNDLE);
    return r;
}

/* open: the trust then depends on more than vmemo.c keys: CRLs (their
 * times), or a PKCS #11 URL (a token GnuTLS asks at each verification). */
#define TRUST_FILE_HOOK(name, kind, crls)                                      \
    EXPORT int name(gnutls_certificate_credentials_t cred, const char *file,   \
                    gnutls_x509_crt_fmt_t type)                                \
    {                                                                          \
        REAL_OR(name, GNUTLS_E_INTERNAL_ERROR);                    \
        bool on = gshim_active();                                              \
        if (on)                                                                \
            cred_changing(cred);                                               \
        int r = real_(cred, file, type);                                       \
        if (on)                                                                \
            cred_changed(cred, crls || file == NULL || !strncmp(file, "pkcs11:", 7)); \
        if (r >= 0 && on)                                                      \
            cred_trust_file(cred, kind, file);                                 \
        return r;                                                              \
    }
TRUST_FILE_HOOK(gnutls_certificate_set_x509_trust_file, 'F', false)
TRUST_FILE_HOOK(gnutls_certificate_set_x509_crl_file, 'R', true)

#define TRUST_MEM_HOOK(name, kind, crls)                                       \
    EXPORT int name(gnutls_certificate_credentials_t cred, const gnutls_datum_t *d, \
                    gnutls_x509_crt_fmt_t type)                                \
    {                                                                          \
        REAL_OR(name, GNUTLS_E_INTERNAL_ERROR);                    \
        bool on = gshim_active();                                              \
        if (on)                                                                \
            cred_changing(cred);                                               \
        int r = real_(cred, d, type);                                          \
        if (on)                                                                \
            cred_changed(cred, crls);                                          \
        if (r >= 0 && on)                                                      \
            cred_trust(cred, kind, d != NULL ? d->data : NULL, d != NULL ? d->size : 0); \
        return r;                                                              \
    }
TRUST_MEM_HOOK(gnutls_certificate_set_x509_trust_mem, 'M', false)
TRUST_MEM_HOOK(gnutls_certificate_set_x509_crl_mem, 'm', true)

/* Trust given as a directory or as objects is digested by what tells it
 * apart (the directory's identity, the number of objects), not by
 * content: enough to choose which session to offer; the judgment reads
 * the trust itself. */
EXPORT int gnutls_certificate_set_x509_trust_dir(gnutls_certificate_credentials_t cred,
                                                 const char *dir, gnutls_x509_crt_fmt_t type)
{
    REAL_OR(gnutls_certificate_set_x509_trust_dir, GNUTLS_E_INTERNAL_ERROR);
    bool on = gshim_active();
    if (on)
        cred_changing(cred);
    int r = real_(cred, dir, type);
    if (on) {
        cred_changed(cred, false);
        cred_trust_file(cred, 'D', dir);
    }
    return r;
}

#define OBJECTS_HOOK(name, type, kind, crls)                                   \
    EXPORT int name(gnutls_certificate_credentials_t cred, type *list, int n)  \
    {                                                                          \
        REAL_OR(name, GNUTLS_E_INTERNAL_ERROR);                    \
        bool on = gshim_active();                                              \
        if (on)                                                                \
            cred_changing(cred);                                               \
        int r = real_(cred, list, n);                                          \
        if (on) {                                                              \
            cred_changed(cred, crls);                                          \
            cred_trust(cred, kind, &n, sizeof n);                              \
        }                                                                      \
        return r;                                                              \
    }
OBJECTS_HOOK(gnutls_certificate_set_x509_trust, gnutls_x509_crt_t, 'X', false)
OBJECTS_HOOK(gnutls_certificate_set_x509_crl, gnutls_x509_crl_t, 'x', true)

/* Trust added through the credentials' own list cannot be seen: the
 * digest only says a list was handed out or set. */
EXPORT void gnutls_certificate_get_trust_list(gnutls_certificate_credentials_t res,
                                              gnutls_x509_trust_list_t *tlist)
{
    REAL_OR_VOID(gnutls_certificate_get_trust_list);
    if (gshim_active()) {
        tdemand_whole_cred(res);
        cred_changing(res);
        cred_changed(res, true);
        cred_trust(res, 'l', "", 0);
    }
    real_(res, tlist);
}

EXPORT void gnutls_certificate_set_trust_list(gnutls_certificate_credentials_t res,
                                              gnutls_x509_trust_list_t tlist, unsigned flags)
{
    REAL_OR_VOID(gnutls_certificate_set_trust_list);
    bool on = gshim_active();
    if (on) {
        cred_changing(res);
        cred_trust(res, 'L', "", 0);
        /* GnuTLS frees the credentials' own list. */
        gnutls_x509_trust_list_t old = NULL;
        G(gnutls_certificate_get_trust_list)(res, &old);
        if (!greal_missing)
            tdemand_list_gone(old);
    }
    real_(res, tlist, flags);
    if (on)
        cred_changed(res, true);
}

EXPORT void gnutls_certificate_set_verify_limits(gnutls_certificate_credentials_t res,
                                                 unsigned int max_bits, unsigned int max_depth)
{
    REAL_OR_VOID(gnutls_certificate_set_verify_limits);
    if (gshim_active())
        cred_limits(res, max_bits, max_depth);
    real_(res, max_bits, max_depth);
}

/* The credentials' verify function: GnuTLS calls it in a full handshake
 * when the session has none of its own, and so does the judgment. */
EXPORT void gnutls_certificate_set_verify_function(gnutls_certificate_credentials_t cred,
                                                   gnutls_certificate_verify_function *func)
{
    REAL_OR_VOID(gnutls_certificate_set_verify_function);
    if (gshim_active())
        cred_verify_function(cred, func);
    real_(cred, func);
}

/* A function that picks the client's certificate: who the client is
 * cannot be known, so no key. */
#define RETRIEVE_HOOK(name, type)                                              \
    EXPORT void name(gnutls_certificate_credentials_t cred, type *func)        \
    {                                                                          \
        REAL_OR_VOID(name);                                           \
        if (gshim_active())                                                    \
            cred_retrieve(cred, func != NULL);                                 \
        real_(cred, func);                                                     \
    }
RETRIEVE_HOOK(gnutls_certificate_set_retrieve_function, gnutls_certificate_retrieve_function)
RETRIEVE_HOOK(gnutls_certificate_set_retrieve_function2, gnutls_certificate_retrieve_function2)
RETRIEVE_HOOK(gnutls_certificate_set_retrieve_function3, gnutls_certificate_retrieve_function3)

/* Keys are only ever added to credentials, but for this, which drops
 * them all: the client's identity is read anew. */
EXPORT void gnutls_certificate_free_keys(gnutls_certificate_credentials_t sc)
{
    REAL_OR_VOID(gnutls_certificate_free_keys);
    real_(sc);
    if (gshim_active())
        cred_keys_gone(sc);
}

/* PSK client credentials: the username and key are the client's identity
 * (cred/psk.c). gnutls_psk_set_client_credentials calls the ...2 form through
 * its hook; each records the same digest. */
EXPORT int gnutls_psk_allocate_client_credentials(gnutls_psk_client_credentials_t *sc)
{
    REAL_OR(gnutls_psk_allocate_client_credentials, GNUTLS_E_MEMORY_ERROR);
    int r = real_(sc);
    if (r == 0 && gshim_active())
        psk_new(*sc);
    return r;
}

EXPORT void gnutls_psk_free_client_credentials(gnutls_psk_client_credentials_t sc)
{
    REAL_OR_VOID(gnutls_psk_free_client_credentials);
    if (gshim_active())
        psk_gone(sc);
    real_(sc);
}

EXPORT int gnutls_psk_set_client_credentials(gnutls_psk_client_credentials_t res,
                                             const char *username, const gnutls_datum_t *key,
                                             gnutls_psk_key_flags flags)
{
    REAL_OR(gnutls_psk_set_client_credentials, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(res, username, key, flags);
    if (r == 0 && gshim_active())
        psk_set(res, username, username != NULL ? strlen(username) : 0,
                key != NULL ? key->data : NULL, key != NULL ? key->size : 0, flags);
    return r;
}

EXPORT int gnutls_psk_set_client_credentials2(gnutls_psk_client_credentials_t res,
                                              const gnutls_datum_t *username,
                                              const gnutls_datum_t *key,
                                              gnutls_psk_key_flags flags)
{
    REAL_OR(gnutls_psk_set_client_credentials2, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(res, username, key, flags);
    if (r == 0 && gshim_active())
        psk_set(res, username != NULL ? username->data : NULL,
                username != NULL ? username->size : 0, key != NULL ? key->data : NULL,
                key != NULL ? key->size : 0, flags);
    return r;
}

#define PSK_FUNCTION_HOOK(name, type)                                          \
    EXPORT void name(gnutls_psk_client_credentials_t cred, type *func)         \
    {                                                                          \
        REAL_OR_VOID(name);                                           \
        if (gshim_active())                                                    \
            psk_callback(cred, func != NULL);                                  \
        real_(cred, func);                                                     \
    }
PSK_FUNCTION_HOOK(gnutls_psk_set_client_credentials_function,
                  gnutls_psk_client_credentials_function)
PSK_FUNCTION_HOOK(gnutls_psk_set_client_credentials_function2,
                  gnutls_psk_client_credentials_function2)
/* 3.8.1's (lib/psk.c of 3.8.9): a third way to hand out the identity. */
PSK_FUNCTION_HOOK(gnutls_psk_set_client_credentials_function3,
                  gnutls_psk_client_credentials_function3)

/* The record functions: a connection publishes once data has moved, and a
 * refused one moves none. While no connection is watched (the common
 * case once each has moved its first bytes), one load and a branch. */
#define RECORD_HOOK(name, sends, params, args)                                 \
    EXPORT ssize_t name params                                                 \
    {                                                                          \
        REAL_OR(name, GNUTLS_E_INTERNAL_ERROR);                       \
        if (__builtin_expect(!gconn_watched(), 1))                             \
            return real_ args;                                                 \
        int refused = gconn_io_before(session);                                \
        if (refused != 0)                                                      \
            return refused;                                                    \
        ssize_t r = real_ args;                                                \
        gconn_io_after(session, r, sends);                                     \
        return r;                                                              \
    }
RECORD_HOOK(gnutls_record_send, true,
            (gnutls_session_t session, const void *data, size_t data_size),
            (session, data, data_size))
RECORD_HOOK(gnutls_record_send2, true,
            (gnutls_session_t session, const void *data, size_t data_size, size_t pad,
             unsigned flags),
            (session, data, data_size, pad, flags))
RECORD_HOOK(gnutls_record_send_range, true,
            (gnutls_session_t session, const void *data, size_t data_size,
             const gnutls_range_st *range),
            (session, data, data_size, range))
RECORD_HOOK(gnutls_record_send_file, true,
            (gnutls_session_t session, int fd, off_t *offset, size_t count),
            (session, fd, offset, count))
RECORD_HOOK(gnutls_record_recv, false,
            (gnutls_session_t session, void *data, size_t data_size),
            (session, data, data_size))
RECORD_HOOK(gnutls_record_recv_seq, false,
            (gnutls_session_t session, void *data, size_t data_size, unsigned char *seq),
            (session, data, data_size, seq))
RECORD_HOOK(gnutls_record_recv_packet, false,
            (gnutls_session_t session, gnutls_packet_t *packet),
            (session, packet))

/* What GnuTLS's verification reads besides its arguments: a clock or a
 * printer of the path of the program's; no verdict is kept after that. */
EXPORT void gnutls_global_set_time_function(gnutls_time_func time_func)
{
    REAL_OR_VOID(gnutls_global_set_time_function);
    vmemo_off();
    real_(time_func);
}

EXPORT void gnutls_session_set_verify_output_function(gnutls_session_t session,
                                                      gnutls_verify_output_function *func)
{
    REAL_OR_VOID(gnutls_session_set_verify_output_function);
    vmemo_off();
    real_(session, func);
}

/* The program's own check of the peer: a failure leaves nothing behind. */
EXPORT int gnutls_certificate_verify_peers2(gnutls_session_t session, unsigned int *status)
{
    REAL_OR(gnutls_certificate_verify_peers2, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, status);
    if ((r != 0 || (status != NULL && *status != 0)) && gshim_active())
        gconn_refused(session);
    return r;
}

EXPORT int gnutls_certificate_verify_peers3(gnutls_session_t session, const char *hostname,
                                            unsigned int *status)
{
    REAL_OR(gnutls_certificate_verify_peers3, GNUTLS_E_INTERNAL_ERROR);
    int r = real_(session, hostname, status);
    if ((r != 0 || (status != NULL && *status != 0)) && gshim_active())
        gconn_refused(session);
    return r;
}

EXPORT int gnutls_certificate_verify_peers(gnutls_session_t session, gnutls_typed_vdata_st *data,
                                           unsigned int elements, unsigned int *status)
{
    REAL_OR(gnutls_certificate_verify_peers, GNUTLS_E_INTERNAL_ERROR);
    int r = vmemo_judging(session) ? vmemo_verify_peers(real_, session, data, elements, status)
                                   : real_(session, data, elements, status);
    if ((r != 0 || (status != NULL && *status != 0)) && gshim_active())
        gconn_refused(session);
    return r;
}
