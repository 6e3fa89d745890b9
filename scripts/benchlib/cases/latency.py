"""latency: the C client through a relay adding 10 ms each way."""

from ..config import COLUMNS, QUICK, REPS
from ..runners import client_argv, done, environ, run
from ..servers import start_relay


def latency_cases(srv, ca):
    relay = start_relay("relay", srv.port, 10)
    n = 5 if QUICK else 10
    for version, opts in (("TLS 1.2, Nagle on", ["--tls12"]),
                          ("TLS 1.2, TCP_NODELAY", ["--tls12", "--nodelay"]),
                          ("TLS 1.3, Nagle on", ["--tls13"]),
                          ("TLS 1.3, TCP_NODELAY", ["--tls13", "--nodelay"])):
        group = f"{version}, 10 ms each way"
        for rep in range(REPS):
            for col in COLUMNS:
                o = opts + ["--warmup", "1", "--n", str(n)] + (
                    ["--native"] if col == "native" else [])
                run("latency", group, col, rep, client_argv(relay, ca, *o), environ(col), srv,
                    requests=1 + n, conns=1 + n, timed=n)
    done("latency")
