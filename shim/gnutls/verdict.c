/* The GnuTLS client key (verdict.h). The server name is the one the
 * program set: gnutls_server_name_get answers only on a server (-50 on a
 * client session, measured).
 *
 * What joins the key, and why:
 * - the server: the name sent (SNI) and the port, or without a name the
 *   peer's address. A program with transport functions of its own
 *   (libcurl's) leaves the shim no socket: the name alone then, and no key
 *   without one;
 * - the flags of gnutls_init and the priority string: what the handshake
 *   may negotiate;
 * - the credentials' verification flags and limits, and the client
 *   certificate (a digest of the first one; none chosen by callback);
 * - the digest of every trust input (cred.c);
 * - for a session whose check runs inside the handshake, which a
 *   resumption skips: the name or data and flags given to
 *   gnutls_session_set_verify_cert(2), and a trust digest that pins the
 *   content. A check by hand (gnutls_certificate_verify_peers*) runs
 *   again on the resumed session's certificates, against whatever the
 *   program trusts then: the trust is in its key only so that a ticket is
 *   not spent on a connection that would refuse it.
 * A verify callback, on the credentials or the session, is never asked on
 * resumption: such a connection has no key. */
#include <string.h>

#include "cred.h"
#include "log.h"
#include "session.h"
#include "verdict.h"

/* The typed data of set_verify_cert2, as GnuTLS reads it: a name, an
 * email address or a key purpose of size 0 is a NUL-terminated string
 * (set_verify_cert itself passes its host name so). A type the shim does
 * not know cannot be told apart: no key. */
static void put_verify(struct key *k, const struct gsettings *set)
{
    key_put_num(k, 'v', set->verify_flags);
    if (set->verify_data == NULL) {
        key_put_num(k, 'H', set->verify_host != NULL);
        key_put_str(k, 'h', set->verify_host);
        return;
    }
    for (unsigned i = 0; i < set->verify_n; i++) {
        const gnutls_typed_vdata_st *d = &set->verify_data[i];
        bool text = d->type == GNUTLS_DT_DNS_HOSTNAME || d->type == GNUTLS_DT_RFC822NAME ||
                    d->type == GNUTLS_DT_KEY_PURPOSE_OID;
        if (!text && d->type != GNUTLS_DT_IP_ADDRESS) {
            key_fail(k);
            return;
        }
        key_put_num(k, 't', d->type);
        if (text && d->size == 0)
            key_put_str(k, 'V', d->data != NULL ? (const char *)d->data : "");
        else
            key_put(k, 'V', d->data, d->size);
    }
}

static void put_cred(struct key *k, gnutls_session_t s, const struct gsettings *set)
{
    void *cred = NULL;
    if (G(gnutls_credentials_get)(s, GNUTLS_CRD_CERTIFICATE, &cred) != 0 || cred == NULL) {
        key_put(k, 'C', "", 0);
        if (set->verify_set)
            key_fail(k); /* a check with no certificate credentials */
        return;
    }
    struct cred_view v;
    if (!cred_view(cred, &v)) {
        key_fail(k);
        return;
    }
    if (v.callback || set->verify_fn) {
        LOG(LOG_DEBUG, "no resumption: a GnuTLS verify or certificate callback");
        key_fail(k);
        return;
    }
    key_put_num(k, 'f', G(gnutls_certificate_get_verify_flags)(cred));
    key_put_num(k, 'b', v.max_bits);
    key_put_num(k, 'd', v.max_depth);
    gnutls_datum_t own = {NULL, 0};
    unsigned char md[32];
    if (G(gnutls_certificate_get_crt_raw)(cred, 0, 0, &own) != 0 || own.data == NULL)
        key_put(k, 'k', "", 0);
    else if (gsession_sha256(own.data, own.size, md))
        key_put(k, 'k', md, sizeof md);
    else
        key_fail(k);
    /* A check by hand would refuse a session earned under other trust, but
     * a TLS 1.3 ticket offered to it would be spent for nothing. */
    key_put(k, 'T', v.trust, sizeof v.trust);
    if (!set->verify_set)
        return;
    if (v.trust_inexact) {
        key_fail(k);
        return;
    }
    put_verify(k, set);
}

void gverdict_key(gnutls_session_t s, const struct gsettings *set, bool listed, struct key *k)
{
    key_begin(k, &gtls_ops, KEY_GNUTLS_CLIENT);
    const char *sni = set->sni[0] != '\0' ? set->sni : NULL;
    int in = -1, out = -1;
    if (!set->own_transport)
        G(gnutls_transport_get_int2)(s, &in, &out);
    key_put_peer(k, sni, out, listed);
    if (k->len == 0)
        LOG(LOG_DEBUG, "no resumption: neither a server name nor a socket to tell the server by");
    key_put_num(k, 'i', set->flags);
    if (set->prio == NULL) {
        LOG(LOG_DEBUG, "no resumption: priorities the shim cannot name");
        key_fail(k);
    } else {
        key_put_str(k, 'P', set->prio);
    }
    put_cred(k, s, set);
    if (__atomic_load_n(&greal_missing, __ATOMIC_ACQUIRE))
        key_fail(k);
    key_end(k);
}
