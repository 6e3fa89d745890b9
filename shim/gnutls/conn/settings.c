/* What the program sets on a session that its key reads (gconn.h):
 * GnuTLS has no getter for it. */
#include <stdlib.h>
#include <string.h>

#include "gconn.h"

/* The check set_verify_cert(2) installs: its host name (NULL: the
 * certificate is checked, no name) or typed data, read when the key is;
 * seen: the function it installs went through the shim's hook. */
void gconn_verify_cert(gnutls_session_t s, const char *host, const gnutls_typed_vdata_st *data,
                       unsigned n, unsigned flags, bool seen, bool two)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return;
    c->set.verify_set = true;
    c->set.verify_unseen = !seen;
    if (!seen)
        c->set.verify_fn = NULL;
    c->set.verify_host = host;
    c->set.verify_data = data;
    c->set.verify_n = n;
    c->set.verify_flags = flags;
    c->set.vcert_calls++, c->set.vcert2 = two, c->set.vcert_after_prio = c->set.prio_applied;
}

/* The function GnuTLS will call: the program's, or GnuTLS's own check
 * (inner: set_verify_cert is setting it); none at all (NULL) is no check,
 * whatever set_verify_cert installed before. */
void gconn_verify_function(gnutls_session_t s, gnutls_certificate_verify_function *fn, bool inner)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return;
    c->set.verify_fn = fn;
    if (!inner) {
        c->set.verify_set = false;
        c->set.verify_unseen = false;
    }
}

void gconn_priority(gnutls_session_t s, const char *text, bool applied)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return;
    c->set.prio_applied += applied;
    free(c->set.prio);
    c->set.prio = text != NULL ? strdup(text) : NULL;
}

/* A name too long for DNS, or holding a NUL, is no name the shim can key
 * by: none (the socket's address then). */
void gconn_server_name(gnutls_session_t s, const void *name, size_t len)
{
    struct gconn *c = gconn_get(s);
    if (c == NULL)
        return;
    c->set.sni[0] = '\0';
    if (name != NULL && len < sizeof c->set.sni && memchr(name, '\0', len) == NULL) {
        memcpy(c->set.sni, name, len);
        c->set.sni[len] = '\0';
    }
}

void gconn_own_transport(gnutls_session_t s)
{
    struct gconn *c = gconn_get(s);
    if (c != NULL)
        c->set.own_transport = true;
}
