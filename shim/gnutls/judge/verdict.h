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
     * the one checked), so the key reads them when the handshake starts,
     * and the judgment when it ends. */
    const char *verify_host;
    const gnutls_typed_vdata_st *verify_data;
    unsigned verify_n;
    unsigned verify_flags;
    /* The session's verify function as GnuTLS holds it: the program's
     * (gnutls_session_set_verify_function), or the check set_verify_cert
     * installs, which is GnuTLS's own function, seen as set_verify_cert
     * passes it through the shim's hook; NULL: none. */
    gnutls_certificate_verify_function *verify_fn;
    /* set_verify_cert installed its check and the hook did not see the
     * function: the judgment runs that check as GnuTLS's does. */
    bool verify_unseen;
    bool own_transport;      /* push or pull functions of the program's */
    /* What made GnuTLS's additional verification flags, which it merges
     * in call order (ADD_PROFILE_VFLAGS): priorities applied
     * (gnutls_priority_set, which every other setter calls), calls of
     * set_verify_cert(2), whether the last was set_verify_cert2 and came
     * after the priorities (vmemo.c). */
    unsigned prio_applied, vcert_calls;
    bool vcert2, vcert_after_prio;
};

/* Who the client is, where a function or what the shim cannot read
 * decides it: the key says only that; no session is kept from a
 * handshake in which one of them did decide (conn/handshake.c). */
struct gidentity {
    bool cert_fn;   /* a function picks the certificate, if the server asks */
    bool psk_fn;    /* a function gives the PSK username and key */
    bool srp;       /* SRP credentials (the shim records none of theirs) */
};

void gverdict_key(gnutls_session_t s, const struct gsettings *set, bool listed, struct key *k,
                  struct gidentity *id);

#endif
