# Two listeners whose starting contexts are alike and whose sni_callback
# moves each connection to the listener's host context by setting
# ssl_object.context: the first host takes any client certificate of
# LENIENT_CA, the second only those of STRICT_CA. The starting contexts
# require a client certificate and trust nothing themselves: the host's
# store decides (OpenSSL verifies against the context the connection is on;
# setting the context leaves the verify mode as it was). Logs one line per
# connection, the server's own verdict:
#   port=P status=ok version=V resumed=0|1 cn=NAME|-   or   port=P status=fail
# usage: sniserver.py LOG PORTFILE CERT KEY LENIENT_CA STRICT_CA [--tls12|--tls13]
import os, selectors, socket, ssl, sys

log_path, port_file, cert, key, lenient_ca, strict_ca = sys.argv[1:7]
version = sys.argv[7] if len(sys.argv) > 7 else None


def context(ca=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.verify_mode = ssl.CERT_REQUIRED
    if ca:
        ctx.load_verify_locations(ca)
    if version:
        v = ssl.TLSVersion.TLSv1_2 if version == "--tls12" else ssl.TLSVersion.TLSv1_3
        ctx.minimum_version = ctx.maximum_version = v
    return ctx


sel = selectors.DefaultSelector()
ports = []
for ca in (lenient_ca, strict_ca):
    host = context(ca)
    start = context()

    def pick(sslobj, name, ctx, host=host):
        if name is not None:
            sslobj.context = host

    start.sni_callback = pick
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    sel.register(ls, selectors.EVENT_READ, start)
    ports.append(ls.getsockname()[1])
with open(port_file + ".tmp", "w") as f:
    f.write("".join(f"{p}\n" for p in ports))
os.rename(port_file + ".tmp", port_file)

log = open(log_path, "a", buffering=1)
while True:
    for k, _ in sel.select():
        conn, _ = k.fileobj.accept()
        port = k.fileobj.getsockname()[1]
        conn.settimeout(10)
        try:
            s = k.data.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            log.write(f"port={port} status=fail\n")
            conn.close()
            continue
        try:
            subject = dict(x[0] for x in (s.getpeercert() or {}).get("subject", ()))
            log.write(f"port={port} status=ok version={s.version()} "
                      f"resumed={int(s.session_reused)} cn={subject.get('commonName', '-')}\n")
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
            s.close()
        except (OSError, ssl.SSLError):
            s.close()
