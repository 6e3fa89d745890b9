/* The bound of what a GnuTLS connection earns: the server's chain and
 * its staples (gconn.h). */
#include "gconn.h"

/* When the staple for a certificate stops counting: its nextUpdate, or
 * without one, as GnuTLS judges it (check_ocsp_response, lib/cert-session.c
 * 3.7.9), MAX_OCSP_VALIDITY_SECS (15 days) after its thisUpdate. */
static time_t staple_until(gnutls_session_t s, unsigned i)
{
    gnutls_datum_t d = {NULL, 0};
    if (G(gnutls_ocsp_status_request_get2)(s, i, &d) != 0 || d.data == NULL)
        return (time_t)1 << 62;
    gnutls_ocsp_resp_t resp = NULL;
    time_t t = 0, this_update = -1, next_update = -1;
    unsigned status;
    if (G(gnutls_ocsp_resp_init)(&resp) == 0 && resp != NULL &&
        G(gnutls_ocsp_resp_import)(resp, &d) == 0 &&
        G(gnutls_ocsp_resp_get_single)(resp, 0, NULL, NULL, NULL, NULL, &status, &this_update,
                                        &next_update, NULL, NULL) == 0)
        t = next_update != -1 ? next_update
            : this_update != -1 ? this_update + 15 * 24 * 3600
                                : 0;
    if (resp != NULL)
        G(gnutls_ocsp_resp_deinit)(resp);
    return t > 0 ? t : 0;
}

/* No session outlives a certificate of the server's chain, nor the OCSP
 * response stapled for one. */
time_t gconn_chain_until(gnutls_session_t s)
{
    unsigned n = 0;
    const gnutls_datum_t *certs = G(gnutls_certificate_get_peers)(s, &n);
    time_t until = (time_t)1 << 62; /* no certificate: nothing to outlive */
    for (unsigned i = 0; certs != NULL && i < n; i++) {
        gnutls_x509_crt_t crt = NULL;
        time_t t = 0;
        if (G(gnutls_x509_crt_init)(&crt) == 0 && crt != NULL &&
            G(gnutls_x509_crt_import)(crt, &certs[i], GNUTLS_X509_FMT_DER) == 0)
            t = G(gnutls_x509_crt_get_expiration_time)(crt);
        if (crt != NULL)
            G(gnutls_x509_crt_deinit)(crt);
        t = t > 0 ? t : 0;
        time_t st = staple_until(s, i);
        until = t < until ? t : until;
        until = st < until ? st : until;
    }
    return until;
}
