# N requests with urllib.request.urlopen, each building its own SSL context
# (as urlopen does when given cafile... here through create_default_context).
# usage: py_urllib.py HOST PORT N CAFILE; prints "ok N" when every body was "ok".
import ssl, sys, urllib.request

host, port, n, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
good = 0
for _ in range(n):
    ctx = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(f"https://{host}:{port}/", context=ctx) as r:
        good += r.read().strip() == b"ok"
print(f"ok {good}")
sys.exit(0 if good == n else 1)
