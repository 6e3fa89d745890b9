"""client, burst and yardstick: the unmodified C client (tests/client.c), one
connection per request, sequential and from threads; bursts after a
sequential warm-up; native resumption with fixed work added."""

from ..config import COLUMNS, PER_THREAD, POOL_SIZE, REPS, YARDSTICK
from ..runners import client_argv, done, environ, record, run


def c_client_cases(servers):
    """With threads, each column first makes a burst of the same width
    (--warm-burst, after one sequential connection) and times the next
    phase: the thread rows compare sustained concurrency, each side past
    its own first burst. A single-use pool's first burst starts from the
    two tickets of one full handshake, where the native client offers its
    one session to all; that burst is reported with its reachable bound in
    the burst table (TLS 1.3; a TLS 1.2 session serves every connection)."""
    for version in ("tls13", "tls12"):
        for cert in ("ecdsa", "rsa"):
            srv, ca = servers[cert]
            for threads in (1, 8, 64):
                n = PER_THREAD[threads]
                group = f"TLS {version[3]}.{version[4]} {cert.upper()} ×{threads}"
                warm = 1 if threads == 1 else 1 + threads
                first = f"burst of {threads} after 1 sequential (TLS 1.3 {cert.upper()}, " \
                        f"the ×{threads} row's first)"
                for rep in range(REPS):
                    for col in COLUMNS:
                        opts = [f"--{version}", "--nodelay", "--warmup", "1", "--threads",
                                str(threads), "--n", str(n)]
                        if threads > 1:
                            opts.append("--warm-burst")
                        if col == "native":
                            opts.append("--native")
                        before = len(srv.lines())
                        row = run("client", group, col, rep, client_argv(srv.port, ca, *opts),
                                  environ(col), srv, requests=warm + n * threads,
                                  conns=warm + n * threads, skip=warm, timed=n * threads)
                        if threads > 1 and version == "tls13" and col in ("shim", "native"):
                            lines = srv.lines()[before:before + warm]
                            record("burst", first, col, resumed_after=sum(
                                map(srv.resumed, lines[1:])),
                                held=tickets_held(lines[:1]) if col == "shim" else None)
                done(group)


# TLS 1.3 tickets an OpenSSL server (nginx) sends after a full handshake and
# after a resumed one: its defaults, counted as NewSessionTicket messages by
# `openssl s_client -msg` against the bench's nginx (OpenSSL 3.0.19, Debian 12, and
# 3.5.9, Debian 13).
TICKETS_FULL, TICKETS_RESUMED = 2, 1


def tickets_held(warmup):
    """Tickets a single-use pool holds when the burst starts, from the
    server's log of the sequential warm-up: each resumed connection spends
    one ticket and brings TICKETS_RESUMED, a full one brings TICKETS_FULL,
    and the pool keeps at most POOL_SIZE. No burst connection can resume on
    a ticket held by none, so this (not min(B, pool)) is what a burst
    reaches at its start; a connection starting after another of the burst
    ended may resume too."""
    held = 0
    for line in warmup:
        resumed = line.startswith("r ")
        held = min(POOL_SIZE, held - resumed + (TICKETS_RESUMED if resumed else TICKETS_FULL))
    return held


def burst_cases(servers):
    srv, ca = servers["ecdsa"]
    warm = 16
    for b in (8, 64):
        group = f"burst of {b} after {warm} sequential (TLS 1.3)"
        for rep in range(REPS):
            for col in ("shim", "native"):
                opts = ["--tls13", "--nodelay", "--warmup", str(warm), "--threads", str(b),
                        "--n", "1"] + (["--native"] if col == "native" else [])
                before = len(srv.lines())
                row = run("burst", group, col, rep, client_argv(srv.port, ca, *opts),
                          environ(col), srv, requests=warm + b, conns=warm + b, skip=warm,
                          timed=b)
                if col == "shim":
                    row["held"] = tickets_held(srv.lines()[before:before + warm])


def yardstick_cases(servers):
    """What work added to each connection costs in the thread rows' setting,
    whoever adds it: native resumption with a fixed computation after each
    handshake (--busy-us), beside the shim, whose judgment runs at that
    point. TLS 1.2 ECDSA, where a resumption costs the client least."""
    srv, ca = servers["ecdsa"]
    for threads in (1, 8, 64):
        # As many connections in every row as in a thread row: a sequential
        # row of 400 wandered by 10 %.
        n = PER_THREAD[8] * 8 // threads
        group = f"TLS 1.2 ECDSA ×{threads}"
        warm = 1 if threads == 1 else 1 + threads
        for rep in range(REPS):
            for col in YARDSTICK:
                opts = ["--tls12", "--nodelay", "--warmup", "1", "--threads", str(threads),
                        "--n", str(n)]
                if threads > 1:
                    opts.append("--warm-burst")
                if col != "shim":
                    opts.append("--native")
                if col.startswith("busy"):
                    opts += ["--busy-us", col[len("busy"):]]
                run("yardstick", group, col, rep, client_argv(srv.port, ca, *opts),
                    environ(col), srv, requests=warm + n * threads, conns=warm + n * threads,
                    skip=warm, timed=n * threads)
        done(f"yardstick {group}")
