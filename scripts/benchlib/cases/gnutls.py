"""gnutls: the GnuTLS test client, one connection per request."""

from ..config import GNUTLSCLIENT, QUICK, REPS
from ..runners import done, environ, run


def gnutls_cases(srv, ca):
    """The GnuTLS test client (tests/gnutlsclient.c), N connections one
    after another in one process, TCP_NODELAY set as the C client's: no
    shim, the shim, and native (--keep: the client sets each connection's
    session on the next, as libcurl does)."""
    n = 100 if QUICK else 400
    for version in ("1.3", "1.2"):
        group = f"GnuTLS client, TLS {version} ECDSA, {n} connections"
        for rep in range(REPS):
            for col in ("none", "shim", "native"):
                argv = [GNUTLSCLIENT, "--connect", f"127.0.0.1:{srv.port}", "--name",
                        "localhost", "--cafile", ca, "--tls", version, "--nodelay", "--count",
                        str(n)] + (["--keep"] if col == "native" else [])
                run("gnutls", group, col, rep, argv, environ(col), srv, requests=n, conns=n,
                    quiet=True)
        done(group)
