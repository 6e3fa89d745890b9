# N requests with requests.get (a new session, pool and SSL context each).
# usage: py_requests.py HOST PORT N CAFILE; prints "ok N".
import sys
import requests

host, port, n, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
good = 0
for _ in range(n):
    r = requests.get(f"https://{host}:{port}/", verify=ca, headers={"Connection": "close"})
    good += r.text.strip() == "ok"
print(f"ok {good}")
sys.exit(0 if good == n else 1)
