/* The judgment of a resumed GnuTLS session (judge.h). */
#include "cred/cred.h"
#include "judge.h"
#include "log.h"
#include "vmemo.h"

/* What gnutls_session_set_verify_cert(2) installs, auto_verify_cb
 * (lib/auto-verify.c), for the rare build whose call of
 * gnutls_session_set_verify_function did not reach the shim's hook: the
 * same verification of the peers with the same data (GnuTLS reads the
 * session's flags itself), the same errors. (GnuTLS's own also records
 * the status for gnutls_session_get_verify_cert_status, which this cannot.) */
static int auto_verify(gnutls_session_t s, const struct gsettings *set)
{
    unsigned status = 0;
    int ret;
    gnutls_typed_vdata_st host = {GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)set->verify_host, 0};
    if (set->verify_data != NULL)
        ret = G(gnutls_certificate_verify_peers)(s, (gnutls_typed_vdata_st *)set->verify_data,
                                                 set->verify_n, &status);
    else if (set->verify_host != NULL)
        ret = G(gnutls_certificate_verify_peers)(s, &host, 1, &status);
    else
        ret = G(gnutls_certificate_verify_peers2)(s, &status);
    if (ret < 0)
        return GNUTLS_E_CERTIFICATE_ERROR;
    if (status != 0)
        return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
    return 0;
}

/* _gnutls_run_verify_callback(session, GNUTLS_CLIENT), step by step. */
int gjudge(gnutls_session_t s, const struct gsettings *set)
{
    /* "if (session->internals.hsk_flags & HSK_PSK_SELECTED) return 0": a
     * handshake authenticated by a PSK has no certificate to check. That
     * flag now marks the resumption itself; what it stands for is the
     * server's authentication of the session resumed, which GnuTLS reports
     * (gnutls_auth_server_get_type: "on resumed sessions, ... the schema
     * used in the original session authentication"), checked next. */
    void *cred = NULL;
    if (G(gnutls_credentials_get)(s, GNUTLS_CRD_CERTIFICATE, &cred) != 0)
        cred = NULL;
    /* "type = gnutls_auth_server_get_type(session); if (type !=
     * GNUTLS_CRD_CERTIFICATE) return 0;" */
    if (G(gnutls_auth_server_get_type)(s) != GNUTLS_CRD_CERTIFICATE)
        return 0;
    /* "_gnutls_check_if_cert_hash_is_same": compares the certificate with
     * an earlier handshake's on this session; on the first it records it.
     * The first handshake is the one judged here. */
    /* "if (cred != NULL && (cred->verify_callback != NULL ||
     * session->internals.verify_callback != NULL) && (entity == CLIENT
     * ...))": the session's function first, else the credentials'. */
    /* In a full handshake a server's certificate without certificate
     * credentials to judge it by fails before this point
     * (GNUTLS_E_INSUFFICIENT_CREDENTIALS); the program may have removed
     * them after the handshake started. */
    if (cred == NULL)
        return GNUTLS_E_INSUFFICIENT_CREDENTIALS;
    int ret;
    /* The verification the check asks for may be answered from the
     * verdicts kept (vmemo.c). */
    vmemo_judge_begin(s, set);
    if (set->verify_fn != NULL) {
        ret = set->verify_fn(s);
    } else if (set->verify_set && set->verify_unseen) {
        ret = auto_verify(s, set);
    } else {
        gnutls_certificate_verify_function *fn;
        if (!cred_verify_fn(cred, &fn)) {
            /* credentials the shim never saw allocated: no key, no offer */
            LOG(LOG_WARN, "a resumed GnuTLS session under unknown credentials");
            vmemo_judge_end();
            return GNUTLS_E_CERTIFICATE_ERROR;
        }
        if (fn == NULL)
            ret = 0;
        else
            ret = fn(s);
    }
    vmemo_judge_end();
    /* "if (ret < -1) return gnutls_assert_val(ret); else if (ret != 0)
     * return gnutls_assert_val(GNUTLS_E_CERTIFICATE_ERROR);" */
    if (ret < -1)
        return ret;
    if (ret != 0)
        return GNUTLS_E_CERTIFICATE_ERROR;
    return 0;
}
