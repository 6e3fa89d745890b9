"""An HTTP CONNECT proxy on 127.0.0.1 for the tests: it tunnels each
CONNECT to 127.0.0.1 at the port asked for. Writes its port to the file
named by its argument. usage: connectproxy.py PORTFILE"""
import socket
import sys
import threading


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def handle(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(4096)
        if not d:
            return
        buf += d
    port = int(buf.split()[1].decode().rsplit(":", 1)[1])
    u = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1], "w") as f:
    f.write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
