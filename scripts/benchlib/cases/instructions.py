"""instructions: instructions per operation, counted by callgrind."""
import subprocess

from ..config import CLIENT, GNUTLSCLIENT, QUICK
from ..runners import WORK, done, environ, instructions, make_empty, record


FIRST = "a process's first connection (start-up, one full TLS 1.3 handshake)"
CURL_ONCE = "one-shot curl trusting the system bundle, resumed from the store (whole process)"


def per_operation(argv, env, n1, n2, per=1):
    """Instructions per operation: the difference between a run of argv(n2)
    and one of argv(n1), over the (n2 - n1) * per operations it makes more."""
    first = instructions(argv(n1), env)
    return (instructions(argv(n2), env) - first) / ((n2 - n1) * per)


def instruction_cases(srv, miss, nothing, ca, bundle):
    """Per operation: the difference between a run of n2 operations and one
    of n1, so start-up and the first full handshake drop out."""
    n1, n2 = (5, 15) if QUICK else (20, 60)
    cases = [
        ("resumed connection, TLS 1.3 ECDSA", srv, ["--tls13"], ("none", "shim", "native")),
        ("resumed connection, TLS 1.2 ECDSA", srv, ["--tls12"], ("none", "shim", "native")),
        ("miss: server hands out nothing, TLS 1.3", nothing, ["--tls13"], ("none", "shim")),
        ("miss: server refuses its own tickets, TLS 1.3", miss, ["--tls13"], ("none", "shim")),
    ]
    for name, server, opts, cols in cases:
        for col in cols:
            record("instructions", name, col, instructions=per_operation(
                lambda n: [CLIENT, "--cafile", ca, "--quiet", "--nodelay", *opts,
                           *(["--native"] if col == "native" else []), "--n", str(n),
                           str(server.port)], environ(col), n1, n2))
    # The GnuTLS test client. Its native resumption (--keep) checks nothing
    # again when the program's check runs inside the handshake; the shim's
    # judgment runs that check (GnuTLS's own verification of the chain).
    # Checked by hand, the program verifies every connection itself,
    # natively too.
    for version in ("1.3", "1.2"):
        for check, how in (("inhandshake", "checked in the handshake"), ("byhand", "checked by hand")):
            name = f"GnuTLS: resumed connection, TLS {version} ECDSA, {how}"
            for col in ("none", "shim", "native"):
                record("instructions", name, col, instructions=per_operation(
                    lambda n: [GNUTLSCLIENT, "--connect", f"127.0.0.1:{srv.port}", "--name",
                               "localhost", "--cafile", ca, "--tls", version, "--verify",
                               check, "--nodelay", "--count", str(n)]
                    + (["--keep"] if col == "native" else []), environ(col), n1, n2))
    for col in ("none", "shim"):
        # Two connections of k requests each.
        record("instructions", "keep-alive, per request", col, instructions=per_operation(
            lambda k: [CLIENT, "--cafile", ca, "--quiet", "--keepalive", str(k), "--n", "2",
                       str(srv.port)], environ(col), 5 * n1, 5 * n2, per=2))
    for col in ("none", "shim"):
        total, looked = instructions([CLIENT, "--cafile", ca, "--quiet", "--nodelay", "--tls13",
                                      "--n", "1", str(srv.port)], environ(col), lookups=True)
        record("instructions", FIRST, col, instructions=total, lookups=looked)
    # A whole one-shot curl trusting the bundle: without the shim, and
    # resumed from the store (which a run outside callgrind filled); the
    # bound is the same resumed curl trusting the test CA alone.
    url = f"https://localhost:{srv.port}/"
    for col, cafile in (("none", bundle), ("shim", bundle), ("bound", ca)):
        env = environ("none" if col == "none" else "store")
        argv = ["curl", "-sS", "-o", "/dev/null", "--cacert", cafile, url]
        if col != "none":
            subprocess.run(argv, env=env, check=True, cwd=WORK)
        record("instructions", CURL_ONCE, col, instructions=instructions(argv, env))
    make_empty()
    for col in ("none", "empty", "shim"):
        record("instructions", "start of /bin/true", col,
               instructions=instructions(["/bin/true"], environ(col)))
    done("instructions")
