"""instructions: instructions per operation, counted by callgrind."""
import subprocess
import sys

from ..config import CLIENT, GNUTLSCLIENT, QUICK
from ..runners import RUNS, WORK, environ, instructions, make_empty


FIRST = "a process's first connection (start-up, one full TLS 1.3 handshake)"
CURL_ONCE = "one-shot curl trusting the system bundle, resumed from the store (whole process)"


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
            ir = [instructions([CLIENT, "--cafile", ca, "--quiet", "--nodelay", *opts,
                                *(["--native"] if col == "native" else []), "--n", str(n),
                                str(server.port)], environ(col)) for n in (n1, n2)]
            RUNS.append({"case": "instructions", "group": name, "column": col, "rep": 0,
                         "instructions": (ir[1] - ir[0]) / (n2 - n1)})
    # The GnuTLS test client. Its native resumption (--keep) checks nothing
    # again when the program's check runs inside the handshake; the shim's
    # judgment runs that check (GnuTLS's own verification of the chain).
    # Checked by hand, the program verifies every connection itself,
    # natively too.
    for version in ("1.3", "1.2"):
        for check, how in (("inhandshake", "checked in the handshake"), ("byhand", "checked by hand")):
            name = f"GnuTLS: resumed connection, TLS {version} ECDSA, {how}"
            for col in ("none", "shim", "native"):
                ir = [instructions([GNUTLSCLIENT, "--connect", f"127.0.0.1:{srv.port}", "--name",
                                    "localhost", "--cafile", ca, "--tls", version, "--verify",
                                    check, "--nodelay", "--count", str(n)]
                                   + (["--keep"] if col == "native" else []), environ(col))
                      for n in (n1, n2)]
                RUNS.append({"case": "instructions", "group": name, "column": col, "rep": 0,
                             "instructions": (ir[1] - ir[0]) / (n2 - n1)})
    for col in ("none", "shim"):
        ir = [instructions([CLIENT, "--cafile", ca, "--quiet", "--keepalive", str(k), "--n", "2",
                            str(srv.port)], environ(col)) for k in (5 * n1, 5 * n2)]
        RUNS.append({"case": "instructions", "group": "keep-alive, per request", "column": col,
                     "rep": 0, "instructions": (ir[1] - ir[0]) / (2 * 5 * (n2 - n1))})
    for col in ("none", "shim"):
        total, looked = instructions([CLIENT, "--cafile", ca, "--quiet", "--nodelay", "--tls13",
                                      "--n", "1", str(srv.port)], environ(col), lookups=True)
        RUNS.append({"case": "instructions", "group": FIRST, "column": col, "rep": 0,
                     "instructions": total, "lookups": looked})
    # A whole one-shot curl trusting the bundle: without the shim, and
    # resumed from the store (which a run outside callgrind filled); the
    # bound is the same resumed curl trusting the test CA alone.
    url = f"https://localhost:{srv.port}/"
    for col, cafile in (("none", bundle), ("shim", bundle), ("bound", ca)):
        env = environ("none" if col == "none" else "store")
        argv = ["curl", "-sS", "-o", "/dev/null", "--cacert", cafile, url]
        if col != "none":
            subprocess.run(argv, env=env, check=True, cwd=WORK)
        RUNS.append({"case": "instructions", "group": CURL_ONCE, "column": col, "rep": 0,
                     "instructions": instructions(argv, env)})
    make_empty()
    for col in ("none", "empty", "shim"):
        RUNS.append({"case": "instructions", "group": "start of /bin/true", "column": col,
                     "rep": 0, "instructions": instructions(["/bin/true"], environ(col))})
    print("bench: instructions done", file=sys.stderr)
