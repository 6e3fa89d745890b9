/* conn: a GnuTLS client session's life as the shim follows it, in a table
 * kept by the session's address from gnutls_init to gnutls_deinit: begin
 * (key, offer), handshake done and, if it resumed the shim's session,
 * judged, tickets as they arrive, the first data, and the end, when what
 * the connection earned goes to the pool.
 *
 * The key chooses (judge/verdict.c); the judgment decides (judge/judge.c):
 * a resumed session runs neither gnutls_session_set_verify_cert's check nor
 * a verify callback (measured on GnuTLS 3.7.9 and 3.8.9, tests/gnutls.bats),
 * so the shim runs it before gnutls_handshake returns success. A check by hand
 * (gnutls_certificate_verify_peers*) re-judges the session's certificates
 * itself; a connection whose check by hand failed publishes nothing, nor
 * does one that never moved application data. */
#ifndef RESUMESHIM_GNUTLS_CONN_H
#define RESUMESHIM_GNUTLS_CONN_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "real.h"

void gconn_init(const struct config *cfg);
/* A client session was made (flags: as the program gave them). */
void gconn_new(gnutls_session_t s, unsigned flags);
/* Whether s is a client session followed from its gnutls_init. */
bool gconn_is_client(gnutls_session_t s);
/* The program frees the session: what it earned is settled first. */
void gconn_free(gnutls_session_t s);
/* At exit: sessions the program never freed are settled. */
void gconn_settle_all(void);

/* Around gnutls_handshake. begin: true when the call is the shim's to
 * answer (*held): a handshake whose judgment failed, or asked to be run
 * again. after: the handshake's result, judged. */
bool gconn_begin(gnutls_session_t s, int *held);
int gconn_after(gnutls_session_t s, int ret);

/* Around the record functions, while any connection is watched: done and
 * not yet used, or refused by its judgment (a few instructions when
 * none is). before: an error to return instead of the call (0: go on). */
extern unsigned gconn_watching;
static inline bool gconn_watched(void)
{
    return __atomic_load_n(&gconn_watching, __ATOMIC_RELAXED) != 0;
}
int gconn_io_before(gnutls_session_t s);
void gconn_io_after(gnutls_session_t s, ssize_t ret, bool sent);

/* The program's own handshake hook: the shim's stays installed and calls
 * it. False when the session is not followed (the call goes to GnuTLS). */
bool gconn_app_hook(gnutls_session_t s, unsigned htype, int when, gnutls_handshake_hook_func f);
/* The program sets session data itself (its own cache), or takes some.
 * gconn_app_set false: the shim offered that ticket first, and the data
 * must not be set. */
bool gconn_app_set(gnutls_session_t s, const void *data, size_t size);
void gconn_app_took(gnutls_session_t s, const void *data, size_t size);

/* What the program sets that a verdict depends on. */
void gconn_verify_cert(gnutls_session_t s, const char *host, const gnutls_typed_vdata_st *data,
                       unsigned n, unsigned flags, bool seen, bool two);
void gconn_verify_function(gnutls_session_t s, gnutls_certificate_verify_function *fn, bool inner);
/* text NULL: priorities the shim cannot name; applied: by
 * gnutls_priority_set, which the other setters call. */
void gconn_priority(gnutls_session_t s, const char *text, bool applied);
/* The server name (SNI) the program set. */
void gconn_server_name(gnutls_session_t s, const void *name, size_t len);
/* The program moves the bytes itself: no socket the shim can read. */
void gconn_own_transport(gnutls_session_t s);
/* The program's own check of the peer (verify_peers*) failed. */
void gconn_refused(gnutls_session_t s);

#endif
