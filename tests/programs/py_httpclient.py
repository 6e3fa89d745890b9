# N requests with http.client, one HTTPSConnection (and one socket) each,
# sharing one SSL context.
# usage: py_httpclient.py HOST PORT N CAFILE; prints "ok N".
import http.client, ssl, sys

host, port, n, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
good = 0
for _ in range(n):
    c = http.client.HTTPSConnection(host, port, context=ctx)
    c.request("GET", "/", headers={"Connection": "close"})
    good += c.getresponse().read().strip() == b"ok"
    c.close()
print(f"ok {good}")
sys.exit(0 if good == n else 1)
