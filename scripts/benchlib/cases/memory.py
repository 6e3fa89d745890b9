"""memory: peak RSS of a client that connected to many servers."""

from ..config import CLIENT, POOL_SIZE, QUICK
from ..runners import done, environ, run
from ..servers import start_psk


def memory_cases(cert, key, ca):
    """Peak RSS of one client process that made one full TLS 1.3 handshake
    to each of H servers (server names h0.test ... on one pskserver, which
    sends T tickets per handshake)."""
    hosts = 256 if QUICK else 1024
    servers = {t: start_psk(f"psk-mem-{t}", cert, key, "--tls13", "--tickets", str(t))
               for t in (1, POOL_SIZE)}
    runs = [("none", 1, hosts), ("shim", 1, hosts), ("shim", POOL_SIZE, hosts)]
    if not QUICK:
        runs.append(("shim", POOL_SIZE, 2 * hosts))
    for rep in range(1 if QUICK else 3):
        for col, tickets, h in runs:
            srv = servers[tickets]
            run("memory", f"{h} servers, {tickets} ticket(s) each", col, rep,
                [CLIENT, "--cafile", ca, "--quiet", "--tls13", "--sni-count", str(h), "--n",
                 str(h), "--rss", str(srv.port)], environ(col), srv, requests=h, conns=h, skip=0)
    done("memory")
