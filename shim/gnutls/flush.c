/* A GnuTLS TLS 1.3 client writes the compatibility ChangeCipherSpec as a
 * record of its own and its Finished a moment later, in another write
 * (measured with strace -e sendmsg, wget against openssl s_server: a
 * 6-byte sendmsg, then a 74-byte one, on GnuTLS 3.7.9 and 3.8.9; the
 * source's comment at STATE100 of _gnutls13_handshake_client,
 * lib/handshake-tls13.c, says the CCS is queued and not sent directly,
 * yet the two leave apart). Under Nagle's algorithm the kernel keeps the
 * Finished until the CCS is acknowledged, and the server, which has
 * nothing to send before the Finished arrives, acknowledges 40 ms later
 * (TcpExtDelayedACKs rises by one per connection): every connection, full
 * or resumed, with or without the shim, waits 40 ms.
 *
 * Turning TCP_NODELAY on pushes what is queued (Linux: tcp_push_pending_
 * frames when the option is set), and turning it off again leaves the
 * socket as the program had it. Only on a TCP socket whose option is off:
 * a program that turned it on had no stall and keeps its setting untouched,
 * and one that sets it later sets it over a socket left as it was. This is
 * done for full handshakes too: the stall is the same there, nothing the
 * program wrote or set changes, and the connection is only faster; the
 * shim is loaded to make unmodified programs fast.
 *
 * Not where the server asked for the client's certificate: it judges that
 * certificate once the Finished is in, and a server that refuses it sends
 * an alert and closes; with the Finished pushed, the program's request
 * reaches a closed socket and the program reads a reset, not the alert
 * (GnuTLS 3.8.9 against nginx: GNUTLS_E_PREMATURE_TERMINATION instead of
 * GNUTLS_E_FATAL_ALERT_RECEIVED, tests/gnutls.bats, client certificates).
 * The program sees the error it sees without the shim.
 *
 * The program's first write after the handshake likewise: a resumed TLS
 * 1.2 handshake ends with the client's ChangeCipherSpec and Finished, and
 * the request written next waits for their acknowledgement, which the
 * server, with nothing to send before the request, delays (measured,
 * GnuTLS 3.7.9 against openssl s_server: DelayedACKs 0 for 3 connections
 * without the shim, 2 with it, its 2 resumed ones; the same after a TLS 1.3
 * handshake to a server that sends no ticket). Pushed once the write is
 * queued, it leaves at once. */
#include "flush.h"
#include "tcp.h"
#include "verified.h"

/* What the kernel holds of the session's socket leaves now. */
static void push(gnutls_session_t s, bool own_transport)
{
    if (own_transport || !feature_on(FEATURE_GNUTLS_FLUSH) ||
        G(gnutls_certificate_client_get_request_status)(s) != 0)
        return;
    int in = -1, out = -1;
    G(gnutls_transport_get_int2)(s, &in, &out);
    tcp_push(out);
}

void gflush_handshake(gnutls_session_t s, bool own_transport)
{
    if (G(gnutls_protocol_get_version)(s) == GNUTLS_TLS1_3)
        push(s, own_transport);
}

void gflush_first_write(gnutls_session_t s, bool own_transport)
{
    push(s, own_transport);
}
