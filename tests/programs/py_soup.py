# GET URL once through libsoup 3 (glib-networking, GnuTLS: it takes each
# TLS 1.3 ticket in a handshake hook for a cache of its own), trusting
# CAFILE alone, and exit; with "exit-now", through os._exit, which runs no
# exit handlers. Prints the status and the body's size.
# usage: python3 py_soup.py URL CAFILE [exit-now]
import os
import sys

import gi

gi.require_version("Soup", "3.0")
from gi.repository import Gio, Soup  # noqa: E402

session = Soup.Session()
session.set_tls_database(Gio.TlsFileDatabase.new(os.path.abspath(sys.argv[2])))
msg = Soup.Message.new("GET", sys.argv[1])
body = session.send_and_read(msg, None)
print(int(msg.get_status()), len(body.get_data()), flush=True)
if sys.argv[3:] == ["exit-now"]:
    os._exit(0)
