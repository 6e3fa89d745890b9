/* verdict: what a GnuTLS client session's verdict depended on, as the
 * core's cache key (kind KEY_GNUTLS_CLIENT, so never equal to an OpenSSL
 * key). */
#ifndef RESUMESHIM_GNUTLS_VERDICT_H
#define RESUMESHIM_GNUTLS_VERDICT_H

#include <stdbool.h>

#include "key.h"
#include "real.h"

/* What the program set on the session that GnuTLS offers no getter for. */
struct gsettings {
    unsigned flags;          /* gnutls_init's */
    char sni[256];           /* the server name set ("": none) */
    char *prio;              /* the priority string; NULL: unknown */
    bool verify_set;         /* gnutls_session_set_verify_cert(2) */
    /* ...what it was given: GnuTLS keeps the pointers and reads them in
     * the handshake (measured: a name changed in place after the call is
     * the one checked), so the key reads them when the handshake starts. */
    const char *verify_host;
    const gnutls_typed_vdata_st *verify_data;
    unsigned verify_n;
    unsigned verify_flags;
    bool verify_fn;          /* gnutls_session_set_verify_function */
    bool own_transport;      /* push or pull functions of the program's */
};

void gverdict_key(gnutls_session_t s, const struct gsettings *set, bool listed, struct key *k);

#endif
