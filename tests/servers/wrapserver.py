# A TLS server that builds a new SSL context for every connection, as
# ssl.wrap_socket(..., server_side=True) did (gone in Python 3.12; wrap()
# below is what it did): without shared ticket keys it
# can never resume. Logs "conn=N port=P resumed=0|1" for every connection
# it served (the server's own verdict, SSLSocket.session_reused).
# usage: wrapserver.py LOG PORTFILE CERT:KEY[:CLIENTCA] [CERT:KEY[:CLIENTCA]...]
#   one listener on 127.0.0.1 per certificate, on free ports written to
#   PORTFILE one per line; with CLIENTCA, that listener requires a client
#   certificate issued by it. Answers any HTTP request with "ok".
import selectors, socket, ssl, sys


def wrap(conn, cert, key, client_ca):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(client_ca)
    return ctx.wrap_socket(conn, server_side=True)


log_path, port_file, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
sel = selectors.DefaultSelector()
ports = []
for pair in pairs:
    cert, key, *client_ca = pair.split(":")
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    sel.register(ls, selectors.EVENT_READ, (cert, key, client_ca[0] if client_ca else None))
    ports.append(ls.getsockname()[1])
with open(port_file + ".tmp", "w") as f:
    f.write("".join(f"{p}\n" for p in ports))
import os
os.rename(port_file + ".tmp", port_file)

log = open(log_path, "a", buffering=1)
n = 0
while True:
    for k, _ in sel.select():
        cert, key, client_ca = k.data
        conn, _ = k.fileobj.accept()
        conn.settimeout(10)
        try:
            s = wrap(conn, cert, key, client_ca)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
            n += 1
            log.write(f"conn={n} port={k.fileobj.getsockname()[1]} resumed={int(s.session_reused)}\n")
            s.close()
        except (OSError, ssl.SSLError) as e:
            log.write(f"error port={k.fileobj.getsockname()[1]} {e}\n")
            conn.close()
