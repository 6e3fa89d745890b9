"""costs: what the shim costs where it cannot help (keep-alive, servers that
never resume, programs without TLS)."""

from ..config import QUICK, REPS
from ..runners import client_argv, done, environ, make_empty, run, shell_loop


def cost_cases(srv, miss, nothing, ca):
    # Keep-alive: one handshake per 200 requests; the figures are per request.
    conns, per = (5, 100) if QUICK else (10, 200)
    for rep in range(REPS):
        for col in ("none", "shim"):
            run("costs", f"keep-alive, {per} requests per connection (per request)", col, rep,
                client_argv(srv.port, ca, "--keepalive", str(per), "--n", str(conns)),
                environ(col), srv, requests=conns * per, conns=conns * per, skip=0,
                timed=conns * per)
    # The miss path: servers that never resume, one that hands out nothing
    # and one (nginx without tickets and cache) whose TLS 1.3 tickets it
    # can never accept, so every connection offers one in vain.
    n = 100 if QUICK else 300
    for name, server, versions in (("server hands out nothing", nothing, ("tls13", "tls12")),
                                   ("server refuses its own tickets", miss, ("tls13",))):
        for version in versions:
            for rep in range(REPS):
                for col in ("none", "shim"):
                    run("costs", f"miss: {name}, TLS {version[3]}.{version[4]}", col, rep,
                        client_argv(server.port, ca, f"--{version}", "--nodelay", "--warmup",
                                    "1", "--n", str(n)),
                        environ(col), server, requests=1 + n, conns=1 + n, timed=n)
    # Start-up of a program without TLS.
    k = 300 if QUICK else 1000
    loop = shell_loop("/bin/true")
    make_empty()
    for rep in range(REPS):
        for col in ("none", "empty", "shim"):
            run("costs", f"/bin/true × {k} (per start)", col, rep,
                ["/bin/sh", "-c", loop, "-", str(k)], environ(col), conns=k)
    done("costs")
