/* ledger: whose a TLS 1.3 ticket is, and so who may offer it. The rule,
 * written here once; the rooms that keep the record (owned.h in a
 * process, the store's spent table (store/spent.h) across processes, the pools
 * that hold the shim's tickets) follow it:
 *
 * A ticket is offered once, by whoever holds it: each ticket is either
 * the shim's or the program's, never both.
 *  - The program's: one it can still offer. One it serialized
 *    (i2d_SSL_SESSION; it may keep the bytes, give them to a child, save
 *    them for a later run), one it offered itself (SSL_set_session,
 *    gnutls_session_set_data), one it holds by reference (kept by its
 *    new-session callback, taken with SSL_get1_session). The shim never
 *    offers it in the process that holds it, nor in a child. One the
 *    program offered is spent for good: marked the program's in the
 *    store, which never hands it out. One it serialized or took and did
 *    not offer is written to the store at exit (a process run once per
 *    request never offers what it kept); from there whoever offers it
 *    first has it, and the store's mark strips a later run's offer of one
 *    the shim handed out: offered once, though the bytes outlive the
 *    process.
 *  - The shim's: every other ticket a connection earned. Single use (RFC
 *    8446 C.4): once the shim offered it, it is spent, and marked so in
 *    the store.
 * A program's own offers are its own: the shim strips one only when the
 * shim offered that ticket first (the program serialized or took it from
 * a connection the shim resumed with it), never because the program
 * offered it before (curl -Z offers one session on many connections).
 * A program that keeps a reference it was never seen taking (a
 * new-session callback that takes one and returns 0) is not known. */
#ifndef RESUMESHIM_LEDGER_H
#define RESUMESHIM_LEDGER_H

/* A ticket's mark in the store's spent table. */
enum mark {
    MARK_NONE,    /* no one offered it: the shim may, once */
    MARK_SHIM,    /* the shim offered it: spent */
    MARK_PROGRAM, /* the program's: the shim never offers it */
};

#endif
