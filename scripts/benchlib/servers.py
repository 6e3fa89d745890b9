"""The test certificates and the servers the cases connect to, each on
127.0.0.1 on a port of its own, its log telling which connections were
resumed."""
import os
import shutil
import socket
import subprocess
import time

from .config import GUNICORN, PSKSERVER, PY, RELAY, ROOT, TEST_SERVERS
from .runners import PROCS, WORK, environ, client_argv, sh


def make_chain(d, kind):
    """Root CA -> intermediate CA -> server certificate of one key kind.
    DIR/ca.pem is the root; DIR/server.pem the leaf followed by the
    intermediate, as servers send it."""
    os.makedirs(d)
    alg = ("-newkey ec -pkeyopt ec_paramgen_curve:P-256" if kind == "ecdsa"
           else "-newkey rsa:2048")
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("[ca]\nbasicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n"
                "[leaf]\nsubjectAltName=DNS:localhost,DNS:test.example,IP:127.0.0.1\n")
    sh(f"""set -e; cd {d}
openssl req -x509 {alg} -nodes -days 3 -subj /CN=bench-root -keyout root.key -out ca.pem
openssl req {alg} -nodes -subj /CN=bench-intermediate -keyout int.key -out int.csr
openssl x509 -req -in int.csr -CA ca.pem -CAkey root.key -CAcreateserial -days 3 \
    -extfile ext -extensions ca -out int.pem
openssl req {alg} -nodes -subj /CN=localhost -keyout server.key -out server.csr
openssl x509 -req -in server.csr -CA int.pem -CAkey int.key -CAcreateserial -days 2 \
    -extfile ext -extensions leaf -out leaf.pem
cat leaf.pem int.pem > server.pem
openssl verify -CAfile ca.pem -untrusted int.pem leaf.pem >/dev/null""",
       stderr=subprocess.DEVNULL)
    return os.path.join(d, "ca.pem"), os.path.join(d, "server.pem"), os.path.join(d, "server.key")


class Server:
    """A server process on 127.0.0.1 whose log tells, line by line, whether
    the connection (nginx: the request) was resumed."""

    def __init__(self, kind, port, pid, log):
        self.kind, self.port, self.pid, self.log = kind, port, pid, log

    def lines(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def lines_since(self, before, count):
        """The lines after the first BEFORE, once there are COUNT of them
        (or after 3 s): nginx logs a request after its response, which the
        client may have read already."""
        lines = self.lines()[before:]
        deadline = time.monotonic() + 3
        while len(lines) < count and time.monotonic() < deadline:
            time.sleep(0.01)
            lines = self.lines()[before:]
        return lines

    def cpu_ns(self):
        # Precise, unlike the clock ticks of /proc/PID/stat; both servers
        # here are one single-threaded process.
        with open(f"/proc/{self.pid}/schedstat") as f:
            return int(f.read().split()[0])

    def resumed(self, line):
        return line.startswith("r ") if self.kind == "nginx" else "resumed=1" in line


class ServerTree(Server):
    """A server of several processes (gunicorn: a master and its workers),
    or of one started through Popen; its CPU time is that of every thread
    of the process and of its children."""

    def __init__(self, kind, port, popen, log):
        super().__init__(kind, port, popen.pid, log)
        self.popen = popen

    def pids(self):
        pids = [self.pid]
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        # "pid (comm) state ppid ...": comm may hold spaces
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == self.pid:
                    pids.append(int(d))
        return pids

    def cpu_ns(self):
        total = 0
        for pid in self.pids():
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                        total += int(f.read().split()[0])
            except OSError:
                pass  # gone between the listing and the reading
        return total

    def stop(self):
        """SIGTERM; gunicorn's master then stops its workers (wait())."""
        self.popen.terminate()

    def wait(self):
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for pid in self.pids():
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            self.popen.wait()
        PROCS.remove(self.pid)


def server_dir(name):
    """WORK/NAME, new, for a server's files."""
    d = os.path.join(WORK, name)
    os.makedirs(d)
    return d


def start_nginx(name, cert, key, extra=""):
    d = server_dir(name)
    out = subprocess.run(
        ["bash", "-c", 'source "$1/scripts/servers.sh"; nginx_start "$2" "$3" "$4" "$5" '
         '>/dev/null 2>&1 </dev/null; echo "$PORT $NGINX_PID"', "-", ROOT, d, cert, key, extra],
        check=True, capture_output=True, text=True).stdout.split()
    PROCS.append(int(out[1]))
    return Server("nginx", int(out[0]), int(out[1]), os.path.join(d, "access.log"))


def wait_file(path):
    for _ in range(200):
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                return int(f.read())
        time.sleep(0.02)
    raise RuntimeError(f"no port in {path}")


def start_psk(name, cert, key, *args):
    d = server_dir(name)
    log = os.path.join(d, "log")
    p = subprocess.Popen([PSKSERVER, "--cert", cert, "--key", key, "--port-file",
                          os.path.join(d, "port"), "--log", log, *args],
                         stdout=subprocess.DEVNULL)
    PROCS.append(p.pid)
    open(log, "a").close()
    return Server("psk", wait_file(os.path.join(d, "port")), p.pid, log)


def start_relay(name, port, delay_ms):
    d = server_dir(name)
    p = subprocess.Popen([RELAY, "--to", str(port), "--delay", str(delay_ms), "--port-file",
                          os.path.join(d, "port")])
    PROCS.append(p.pid)
    return wait_file(os.path.join(d, "port"))


SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def make_bundle(ca):
    """What a real program trusts by default: a copy of the system's CA
    bundle (Debian's, 144 certificates) with the test CA appended."""
    path = os.path.join(WORK, "bundle.pem")
    with open(path, "wb") as out:
        for src in (SYSTEM_BUNDLE, ca):
            with open(src, "rb") as f:
                data = f.read()
            out.write(data if data.endswith(b"\n") else data + b"\n")
    return path


def start_nginx_pages(cert, key):
    """nginx as start_nginx, serving "ok" and /git/repo.git, a bare
    repository for dumb HTTP (as tests/gnutls.bash's make_bare_repo), if
    git is there."""
    d = server_dir("pages")
    if shutil.which("git"):
        sh(f"""set -e; cd {d}
git init -q -b main work; echo hello > work/file; git -C work add file
git -C work -c user.name=t -c user.email=t@t commit -q -m one
git clone -q --bare work git/repo.git; git -C git/repo.git update-server-info""",
           stderr=subprocess.DEVNULL)
    return start_nginx("nginx-pages", cert, key, f"location /git/ {{ root {d}; }}")


def server_environ(column, log):
    """The server's environment: as it is (before), or with the shim's
    server mode (after)."""
    env = environ("shim" if column == "after" else "none")
    if column == "after":
        env["RESUMESHIM_SERVER"] = "1"
    env["RESUME_LOG"] = log
    return env


def start_gunicorn(name, cert, key, workers, column):
    """gunicorn's sync workers on a listening socket of ours (fd://), so the
    port is free without a race; its own messages in DIR/server.log."""
    d = server_dir(name)
    log = os.path.join(d, "log")
    open(log, "a").close()
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    with open(os.path.join(d, "server.log"), "w") as err:
        p = subprocess.Popen([GUNICORN, "--chdir", TEST_SERVERS, "-w", str(workers), "-b",
                              f"fd://{ls.fileno()}", "--certfile", cert, "--keyfile", key,
                              "gunicorn_app:app"], env=server_environ(column, log),
                             pass_fds=[ls.fileno()], stdin=subprocess.DEVNULL,
                             stdout=err, stderr=err, cwd=d)
    PROCS.append(p.pid)
    port = ls.getsockname()[1]
    ls.close()
    return ServerTree("gunicorn", port, p, log)


def start_wrapserver(name, cert, key, column):
    d = server_dir(name)
    log = os.path.join(d, "log")
    open(log, "a").close()
    with open(os.path.join(d, "server.log"), "w") as err:
        p = subprocess.Popen([PY, os.path.join(TEST_SERVERS, "wrapserver.py"), log,
                              os.path.join(d, "port"), f"{cert}:{key}"],
                             env=server_environ(column, log), stdin=subprocess.DEVNULL,
                             stdout=err, stderr=err, cwd=d)
    PROCS.append(p.pid)
    return ServerTree("wrap", wait_file(os.path.join(d, "port")), p, log)


def warm_up(srv, ca, workers):
    """Until every worker has served a connection (its start-up done, its
    first context made): bursts of concurrent connections, which the
    workers share. Their log lines stay out of the runs' figures."""
    for _ in range(100):
        subprocess.run(client_argv(srv.port, ca, "--sni", "localhost", "--threads",
                                   str(2 * workers), "--n", "2"),
                       env=environ("shim"), stdout=subprocess.DEVNULL, cwd=WORK, timeout=30)
        lines = srv.lines()
        served = {w for line in lines for w in line.split() if w.startswith("pid=")}
        if len(served) >= workers or (workers == 1 and lines):
            return
        time.sleep(0.05)
    with open(os.path.join(os.path.dirname(srv.log), "server.log")) as f:
        raise RuntimeError(f"{srv.kind}: {len(served)} of {workers} workers served:\n"
                           f"{f.read()[-2000:]}")
