"""servers: servers that make an SSL context per connection, without and
with the shim's server mode."""

from ..config import QUICK, REPS
from ..runners import client_argv, done, environ, run
from ..servers import start_gunicorn, start_wrapserver, warm_up


SERVER_COLUMNS = ["before", "after"]


def server_cases(chains):
    """Servers that make an SSL context per connection, as they are
    (before) and with the shim's server mode (after); the client is the C
    client under the shim, which offers a ticket whenever it has one. A
    server per column for the whole case, the columns alternating."""
    n = 60 if QUICK else 200
    per = 8 if QUICK else 25
    setups = [
        ("gunicorn", 1, "ecdsa", [(f"gunicorn -w 1, {n} one after another", 1, n)]),
        ("gunicorn", 4, "ecdsa", [(f"gunicorn -w 4, {n} one after another", 1, n),
                                  (f"gunicorn -w 4, 8 threads × {per}", 8, per)]),
        ("gunicorn", 1, "rsa", [(f"gunicorn -w 1, RSA-2048, {n} one after another", 1, n)]),
        ("wrap", 1, "ecdsa", [(f"wrapserver.py, {n} one after another", 1, n)]),
    ]
    for kind, workers, chain, cases in setups:
        ca, cert, key = chains[chain]
        srvs = {}
        for col in SERVER_COLUMNS:
            name = f"{kind}-{workers}-{chain}-{col}"
            srvs[col] = (start_gunicorn(name, cert, key, workers, col) if kind == "gunicorn"
                         else start_wrapserver(name, cert, key, col))
        for col in SERVER_COLUMNS:
            warm_up(srvs[col], ca, workers)
        for group, threads, k in cases:
            for rep in range(REPS):
                for col in SERVER_COLUMNS:
                    run("servers", group, col, rep,
                        client_argv(srvs[col].port, ca, "--sni", "localhost", "--nodelay",
                                    "--warmup", "1", "--threads", str(threads), "--n", str(k)),
                        environ("shim"), srvs[col], requests=1 + k * threads,
                        conns=1 + k * threads, skip=1 if threads == 1 else 1 + threads,
                        timed=k * threads)
            done(group)
        for col in SERVER_COLUMNS:
            srvs[col].stop()
        for col in SERVER_COLUMNS:
            srvs[col].wait()
