/* The GnuTLS client key (verdict.h). The server name is the one the
 * program set: gnutls_server_name_get answers only on a server (-50 on a
 * client session, measured).
 *
 * The key chooses which session to offer; it does not decide whether the
 * connection may go on: after a resumed handshake the shim asks the check
 * the resumption skipped (judge.c), with the session's final state. So
 * the key holds what chooses well, and what no judgment of the server can
 * catch, the client's own identity:
 * - the server: the name sent (SNI) and the port, or without a name the
 *   peer's address. A program with transport functions of its own
 *   (libcurl's) leaves the shim no socket: the name alone then, and no key
 *   without one;
 * - the flags of gnutls_init and the priority string: what the handshake
 *   may negotiate;
 * - who the client is: every certificate and key of the certificate
 *   credentials, by content, and the PSK credentials' username and key.
 *   Where a function decides instead (gnutls_certificate_set_retrieve_
 *   function*, gnutls_psk_set_client_credentials_function*) or the shim
 *   cannot read it (SRP), the key says so, and a handshake in which it
 *   did decide (the server asked for a certificate; the handshake was
 *   authenticated by the PSK, or SRP) keeps no session: none is resumed
 *   under an identity the key does not hold;
 * - to choose: the credentials' verification flags and limits, a digest of
 *   every trust input (cred.c), and the name or data and flags given to
 *   gnutls_session_set_verify_cert(2). A session earned under other trust
 *   or for another name would fail its judgment, and a TLS 1.3 ticket
 *   offered to it would be spent for nothing. */
#include <string.h>

#include "cred/cred.h"
#include "endpoint.h"
#include "log.h"
#include "cred/psk.h"
#include "session.h"
#include "prio.h"
#include "verdict.h"

/* The typed data of set_verify_cert2, as GnuTLS reads it: a name, an
 * email address or a key purpose is the NUL-terminated string at its
 * pointer, whatever its size says (the size only bounds a lookup among a
 * trust list's named certificates, so it is kept too: vmemo.c cites the
 * code, GnuTLS 3.7.9 and 3.8.9); other data are their size's bytes. */
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
        key_put_num(k, 't', d->type);
        if (text) {
            key_put_num(k, 'z', d->size);
            key_put_str(k, 'V', d->data != NULL ? (const char *)d->data : "");
        } else if (d->data != NULL)
            key_put(k, 'V', d->data, d->size);
    }
}

static void put_cred(struct key *k, gnutls_session_t s, const struct gsettings *set,
                     struct gidentity *id)
{
    void *cred = NULL;
    if (G(gnutls_credentials_get)(s, GNUTLS_CRD_CERTIFICATE, &cred) != 0 || cred == NULL) {
        key_put(k, 'C', "", 0);
        return;
    }
    struct cred_view v;
    if (!cred_view(cred, &v)) {
        key_fail(k);
        return;
    }
    id->cert_fn = v.retrieve;
    key_put_num(k, 'R', v.retrieve);
    if (!v.identity_ok) {
        LOG(LOG_DEBUG, "no resumption: a client key the shim cannot read");
        key_fail(k);
        return;
    }
    key_put(k, 'k', v.identity, sizeof v.identity);
    key_put_num(k, 'f', G(gnutls_certificate_get_verify_flags)(cred));
    key_put_num(k, 'b', v.max_bits);
    key_put_num(k, 'd', v.max_depth);
    key_put(k, 'T', v.trust, sizeof v.trust);
    if (set->verify_set)
        put_verify(k, set);
}

/* PSK and SRP credentials: who the client is, beside its certificates. */
static void put_secrets(struct key *k, gnutls_session_t s, struct gidentity *id)
{
    void *cred = NULL;
    if (G(gnutls_credentials_get)(s, GNUTLS_CRD_PSK, &cred) == 0 && cred != NULL) {
        struct psk_view v;
        if (!psk_view(cred, &v) || v.unknown) {
            LOG(LOG_DEBUG, "no resumption: PSK credentials the shim did not see made");
            key_fail(k);
            return;
        }
        id->psk_fn = v.callback;
        key_put_num(k, 'Q', v.callback);
        key_put_num(k, 'p', v.set);
        key_put(k, 'P', v.identity, sizeof v.identity);
    }
    cred = NULL;
    id->srp = G(gnutls_credentials_get)(s, GNUTLS_CRD_SRP, &cred) == 0 && cred != NULL;
    key_put_num(k, 'S', id->srp);
}

void gverdict_key(gnutls_session_t s, const struct gsettings *set, bool listed, struct key *k,
                  struct gidentity *id)
{
    *id = (struct gidentity){false, false, false};
    key_begin(k, &gtls_ops, KEY_GNUTLS_CLIENT);
    const char *sni = set->sni[0] != '\0' ? set->sni : NULL;
    int in = -1, out = -1;
    if (!set->own_transport)
        G(gnutls_transport_get_int2)(s, &in, &out);
    key_put_peer(k, sni, out >= 0 ? out : endpoint_fresh_socket(), listed);
    if (k->len == 0)
        LOG(LOG_DEBUG, "no resumption: neither a server name nor a socket to tell the server by");
    key_put_num(k, 'i', set->flags);
    /* Early data would leave before any judgment (GnuTLS sends it with the
     * first flight, under the offered session's keys), and the shim never
     * sends early data. */
    if (set->flags & GNUTLS_ENABLE_EARLY_DATA) {
        LOG(LOG_DEBUG, "no resumption: the program enables early data");
        key_fail(k);
    }
    /* The system configuration GnuTLS merges into every priority string
     * (lib/priority.c reads it again when it changes). */
    unsigned char sys[32];
    if (prio_system(sys))
        key_put(k, 'Y', sys, sizeof sys);
    else
        key_fail(k);
    if (set->prio == NULL) {
        LOG(LOG_DEBUG, "no resumption: priorities the shim cannot name");
        key_fail(k);
    } else {
        key_put_str(k, 'r', set->prio);
    }
    put_cred(k, s, set, id);
    put_secrets(k, s, id);
    if (__atomic_load_n(&greal_missing, __ATOMIC_ACQUIRE))
        key_fail(k);
    key_end(k);
}
