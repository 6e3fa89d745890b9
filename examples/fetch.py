"""An ordinary Python program: fetch a URL N times with urllib, a fresh
SSL context each time, as most scripts do. It has no session handling."""
import ssl
import sys
import urllib.request

url, cafile, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(n):
    ctx = ssl.create_default_context(cafile=cafile)
    with urllib.request.urlopen(url, context=ctx) as response:
        response.read()
