# N requests over asyncio streams with ssl=: the TLS runs over memory BIOs
# (SSLObject), never on the socket.
# usage: py_asyncio.py HOST PORT N CAFILE; prints "ok N".
import asyncio, ssl, sys

host, port, n, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

async def main():
    ctx = ssl.create_default_context(cafile=ca)
    good = 0
    for _ in range(n):
        reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
        writer.write(f"GET / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        data = await reader.read()
        good += data.endswith(b"\r\n\r\nok\n") or data.endswith(b"\r\n\r\nok")
        writer.close()
        try:
            await writer.wait_closed()
        except (ssl.SSLError, ConnectionError):
            pass
    return good

good = asyncio.run(main())
print(f"ok {good}")
sys.exit(0 if good == n else 1)
