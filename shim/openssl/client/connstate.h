/* connstate: a client connection's state, shared by the files that
 * follow it (conn.c its life, connoffer.c the offer, conndone.c the
 * handshake's end, connkeep.c the sessions it earns); the rest of the shim
 * sees conn.h. */
#ifndef RESUMESHIM_CONNSTATE_H
#define RESUMESHIM_CONNSTATE_H

#include <stdbool.h>
#include <time.h>

#include "conn.h"
#include "key.h"
#include "real.h"
#include "seam.h"

struct conn {
    struct key key;
    SSL_SESSION *offered;   /* our reference to what we set, until done */
    bool offered_kept;      /* from done on: the shim offered what resumed */
    bool resumed;           /* ...and it resumed: the program may abandon it */
    struct chain offered_chain;
    struct chain chain;     /* the verified peer chain, from done on */
    STACK_OF(X509) *verified_chain; /* the judge's (SSL_get0_verified_chain) */
    time_t offered_born;
    time_t born;            /* the verifying full handshake behind this one */
    unsigned gen;           /* fork generation at begin */
    bool started, done, used, verified;
    bool shut;              /* the program sent its shutdown (conn_shutdown) */
    bool judged;            /* the status callback saw the kept staple */
    bool refused;           /* the judge refused the resumed connection */
    bool cert_asked;        /* a certificate callback ran (certcb.c) */
    unsigned char identity[32]; /* the client's, as the handshake began */
    bool pending;           /* ...or a verify callback suspended the judgment */
    int refusal;            /* the reason pushed for it (SSL_R_...) */
    bool push;              /* a resumed TLS 1.2 handshake's first write waits (tcp.c) */
    unsigned n_held;
    struct pooled *held;    /* pool_size slots, allocated on demand */
    struct pooled latest;   /* the newest TLS 1.3 ticket, see conn_session */
    bool latest_reserved;   /* a copy waits to reach the store at exit */
};

/* The SSL ex_data index of the state (conn.c); -1 before conn_init. */
extern int conn_index;
static inline struct conn *conn_get(SSL *s)
{
    return conn_index >= 0 ? R(SSL_get_ex_data)(s, conn_index) : NULL;
}

/* The offer (connoffer.c), as the handshake begins: the application's own
 * session, or the pool's for the key. */
void conn_offer(struct conn *c, SSL *s, SSL_CTX *ctx);

/* The handshake's end (conndone.c). notice_done: once it has ended, its
 * outcome noted and a resumed connection judged. judge: the judgment, also
 * taken again after a verify callback suspended it. push_refusal: the
 * reason of a refusal, for every later handshake call that fails. */
void conn_notice_done(struct conn *c, SSL *s);
void conn_judge(struct conn *c, SSL *s);
void conn_push_refusal(const struct conn *c);
/* The judge's chain replaces the one kept (NULL: none kept). */
void conn_set_verified_chain(struct conn *c, STACK_OF(X509) *chain);

/* The sessions the connection earns (connkeep.c). publish_held: at first
 * use of a verified connection, what was held back goes to the pool.
 * The newest TLS 1.3 ticket: reserve_latest reserves its copy for the
 * store at exit, settle_latest hands it on as the connection ends (or is
 * shut down), drop_latest lets it go unpublished. */
void conn_keep_init(const struct config *cfg);
void conn_publish_held(struct conn *c, SSL *s);
void conn_reserve_latest(struct conn *c);
void conn_settle_latest(struct conn *c);
void conn_drop_latest(struct conn *c);

#endif
