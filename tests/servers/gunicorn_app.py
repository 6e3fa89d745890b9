# A WSGI application for gunicorn that logs, for every request, whether the
# server resumed the TLS session (gunicorn's sync worker closes the
# connection after each request, so a request is a connection). The log is
# the file named by $RESUME_LOG: "conn pid=PID resumed=0|1".
import os


def app(environ, start_response):
    sock = environ.get("gunicorn.socket")
    reused = int(bool(getattr(sock, "session_reused", False)))
    with open(os.environ["RESUME_LOG"], "a") as f:
        f.write(f"conn pid={os.getpid()} resumed={reused}\n")
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]
