/* The exported trust-list entry points: credentials' lists loaded on
 * demand (trust/tdemand.h). A load into a list that waits is recorded; a
 * lookup runs on its shadow; anything else that reads or changes a list
 * that waits has it loaded whole first, then goes to GnuTLS. Calls the
 * shim makes itself pass through. */
#include <strings.h>

#include "conn/conn.h"
#include "hook.h"
#include "init.h"
#include "trust/tdemand.h"

EXPORT int gnutls_x509_trust_list_add_trust_mem(gnutls_x509_trust_list_t list,
                                                const gnutls_datum_t *cas,
                                                const gnutls_datum_t *crls,
                                                gnutls_x509_crt_fmt_t type, unsigned int tl_flags,
                                                unsigned int tl_vflags)
{
    REAL_OR(gnutls_x509_trust_list_add_trust_mem, GNUTLS_E_INTERNAL_ERROR);
    int r;
    if (!tdemand_inside() && gshim_active() &&
        tdemand_add_mem(list, cas, crls, type, tl_flags, tl_vflags, &r))
        return r;
    return real_(list, cas, crls, type, tl_flags, tl_vflags);
}

/* A PKCS #11 URL puts a token in the list, which add_trust_mem never sees
 * (lib/x509/verify-high2.c); files reach add_trust_mem. */
EXPORT int gnutls_x509_trust_list_add_trust_file(gnutls_x509_trust_list_t list,
                                                 const char *ca_file, const char *crl_file,
                                                 gnutls_x509_crt_fmt_t type,
                                                 unsigned int tl_flags, unsigned int tl_vflags)
{
    REAL_OR(gnutls_x509_trust_list_add_trust_file, GNUTLS_E_INTERNAL_ERROR);
    if (ca_file != NULL && strncasecmp(ca_file, "pkcs11:", 7) == 0 && gshim_active())
        tdemand_whole(list);
    return real_(list, ca_file, crl_file, type, tl_flags, tl_vflags);
}

#define WHOLE_FIRST(name, params, args)                                        \
    EXPORT int name params                                                     \
    {                                                                          \
        REAL_OR(name, GNUTLS_E_INTERNAL_ERROR);                                \
        if (gshim_active())                                                    \
            tdemand_whole(list);                                               \
        return real_ args;                                                     \
    }
WHOLE_FIRST(gnutls_x509_trust_list_add_cas,
            (gnutls_x509_trust_list_t list, const gnutls_x509_crt_t *clist, unsigned clist_size,
             unsigned int flags),
            (list, clist, clist_size, flags))
WHOLE_FIRST(gnutls_x509_trust_list_add_crls,
            (gnutls_x509_trust_list_t list, const gnutls_x509_crl_t *crl_list, unsigned crl_size,
             unsigned int flags, unsigned int verification_flags),
            (list, crl_list, crl_size, flags, verification_flags))
WHOLE_FIRST(gnutls_x509_trust_list_remove_cas,
            (gnutls_x509_trust_list_t list, const gnutls_x509_crt_t *clist, unsigned clist_size),
            (list, clist, clist_size))
WHOLE_FIRST(gnutls_x509_trust_list_remove_trust_mem,
            (gnutls_x509_trust_list_t list, const gnutls_datum_t *cas, gnutls_x509_crt_fmt_t type),
            (list, cas, type))
WHOLE_FIRST(gnutls_x509_trust_list_add_named_crt,
            (gnutls_x509_trust_list_t list, gnutls_x509_crt_t cert, const void *name,
             size_t name_size, unsigned int flags),
            (list, cert, name, name_size, flags))
WHOLE_FIRST(gnutls_x509_trust_list_verify_named_crt,
            (gnutls_x509_trust_list_t list, gnutls_x509_crt_t cert, const void *name,
             size_t name_size, unsigned int flags, unsigned int *verify,
             gnutls_verify_output_function func),
            (list, cert, name, name_size, flags, verify, func))
WHOLE_FIRST(gnutls_x509_trust_list_iter_get_ca,
            (gnutls_x509_trust_list_t list, gnutls_x509_trust_list_iter_t *iter,
             gnutls_x509_crt_t *crt),
            (list, iter, crt))
/* Without a name, a search of every bucket. */
WHOLE_FIRST(gnutls_x509_trust_list_get_issuer_by_subject_key_id,
            (gnutls_x509_trust_list_t list, const gnutls_datum_t *dn, const gnutls_datum_t *spki,
             gnutls_x509_crt_t *issuer, unsigned int flags),
            (list, dn, spki, issuer, flags))

/* The signer is searched for in the list by name and by key. */
EXPORT int gnutls_ocsp_resp_verify(gnutls_ocsp_resp_const_t resp, gnutls_x509_trust_list_t list,
                                   unsigned int *verify, unsigned int flags)
{
    REAL_OR(gnutls_ocsp_resp_verify, GNUTLS_E_INTERNAL_ERROR);
    if (gshim_active())
        tdemand_whole(list);
    return real_(resp, list, verify, flags);
}

/* Lookups: on the shadow holding every bucket the call reads. */
EXPORT int gnutls_x509_trust_list_verify_crt2(gnutls_x509_trust_list_t list,
                                              gnutls_x509_crt_t *cert_list,
                                              unsigned int cert_list_size,
                                              gnutls_typed_vdata_st *data, unsigned int elements,
                                              unsigned int flags, unsigned int *voutput,
                                              gnutls_verify_output_function func)
{
    REAL_OR(gnutls_x509_trust_list_verify_crt2, GNUTLS_E_INTERNAL_ERROR);
    if (gshim_active())
        list = tdemand_lookup(list, cert_list, cert_list_size, NULL);
    return real_(list, cert_list, cert_list_size, data, elements, flags, voutput, func);
}

EXPORT int gnutls_x509_trust_list_get_issuer(gnutls_x509_trust_list_t list,
                                             gnutls_x509_crt_t cert, gnutls_x509_crt_t *issuer,
                                             unsigned int flags)
{
    REAL_OR(gnutls_x509_trust_list_get_issuer, GNUTLS_E_INTERNAL_ERROR);
    if (gshim_active())
        list = tdemand_lookup(list, &cert, 1, NULL);
    return real_(list, cert, issuer, flags);
}

EXPORT int gnutls_x509_trust_list_get_issuer_by_dn(gnutls_x509_trust_list_t list,
                                                   const gnutls_datum_t *dn,
                                                   gnutls_x509_crt_t *issuer, unsigned int flags)
{
    REAL_OR(gnutls_x509_trust_list_get_issuer_by_dn, GNUTLS_E_INTERNAL_ERROR);
    if (gshim_active())
        list = tdemand_lookup(list, NULL, 0, dn);
    return real_(list, dn, issuer, flags);
}

/* A certificate of the program's own: GnuTLS files it by the names it had
 * when it was imported (none, for one never imported), which a certificate
 * changed since no longer shows (gnutls_x509_crt_get_raw_dn reads the new
 * ones): the bucket the lookup reads is not known. GnuTLS itself never
 * calls this; the peer's certificates a verification looks up are
 * GnuTLS's own, as imported. */
EXPORT int gnutls_certificate_get_issuer(gnutls_certificate_credentials_t sc,
                                         gnutls_x509_crt_t cert, gnutls_x509_crt_t *issuer,
                                         unsigned int flags)
{
    REAL_OR(gnutls_certificate_get_issuer, GNUTLS_E_INTERNAL_ERROR);
    if (gshim_active())
        tdemand_whole_cred(sc);
    return real_(sc, cert, issuer, flags);
}

/* A server's handshake sends the CA names the loads gathered, in load
 * order; a client's never reads them. A session not followed as a client
 * from its gnutls_init counts as a server. */
EXPORT int gnutls_credentials_set(gnutls_session_t session, gnutls_credentials_type_t type,
                                  void *cred)
{
    REAL_OR(gnutls_credentials_set, GNUTLS_E_INTERNAL_ERROR);
    if (type == GNUTLS_CRD_CERTIFICATE && cred != NULL && gshim_active() &&
        !gconn_is_client(session))
        tdemand_whole_cred(cred);
    return real_(session, type, cred);
}

EXPORT void gnutls_certificate_free_ca_names(gnutls_certificate_credentials_t sc)
{
    REAL_OR_VOID(gnutls_certificate_free_ca_names);
    if (gshim_active())
        tdemand_whole_cred(sc);
    real_(sc);
}

/* Before the program can see what GnuTLS logs, every list waiting is
 * loaded as it would have been, unseen. */
#define NOISY(name, type)                                                      \
    EXPORT void name(type arg)                                                 \
    {                                                                          \
        REAL_OR_VOID(name);                                                    \
        if (gshim_active())                                                    \
            tdemand_noisy();                                                   \
        real_(arg);                                                            \
    }
NOISY(gnutls_global_set_log_function, gnutls_log_func)
NOISY(gnutls_global_set_audit_log_function, gnutls_audit_log_func)
NOISY(gnutls_global_set_log_level, int)
