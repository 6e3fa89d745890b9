/* judge: the check a resumed handshake skipped, asked after it, before
 * gnutls_handshake returns success.
 *
 * GnuTLS runs one check of the server's certificate inside a full client
 * handshake, _gnutls_run_verify_callback (lib/handshake.c, 3.7.9; the same
 * code in 3.8.9): the
 * session's verify function (gnutls_session_set_verify_function; the check
 * gnutls_session_set_verify_cert installs is one, GnuTLS's own), else the
 * credentials' (gnutls_certificate_set_verify_function). A resumed
 * handshake skips it: in TLS 1.3 a resumption is a PSK handshake, which
 * the function leaves at once (HSK_PSK_SELECTED); in TLS 1.2 it runs
 * before the resumed parameters are in place and finds no certificate
 * authentication (measured: a callback set on the credentials is never
 * called on a resumed TLS 1.2 session). The shim calls the same function
 * with the same rules once the handshake is done, when the session reports
 * the resumed server's certificates, so the check reads what it would
 * have read in a full handshake at that point: the session's verification
 * flags and profile as the priorities, set_verify_cert(2) calls and the
 * system configuration left them, the credentials' trust and limits as
 * they are, the name or data set_verify_cert(2) gave, the stapled OCSP
 * responses the session kept, the clock. */
#ifndef RESUMESHIM_GNUTLS_JUDGE_H
#define RESUMESHIM_GNUTLS_JUDGE_H

#include "real.h"
#include "verdict.h"

/* 0: the connection may go on; else the error the full handshake would
 * have failed with (GNUTLS_E_AGAIN or _INTERRUPTED: the function asks to
 * be called again, as GnuTLS would on the next gnutls_handshake). */
int gjudge(gnutls_session_t s, const struct gsettings *set);

#endif
