"""One run of a program, as the cases make them: its environment (no
shim, shim, store), its timing, CPU and peak RSS, what the server logged
meanwhile; and callgrind's count of the instructions it executes."""
import os
import subprocess
import sys
import tempfile
import time

from .config import CLIENT, SHIM

WORK = tempfile.mkdtemp(prefix="resumeshim-bench.")
STORES = []
STORE_PARENT = next((d for d in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm")
                     if d and os.path.isdir(d) and os.access(d, os.W_OK)), WORK)
PROCS = []
RUNS = []  # one dict per run, for raw.csv


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, cwd=WORK, **kw)


def environ(column):
    """The environment of one column: no shim, shim, shim with a fresh
    private store, or native (the client's own session, no shim)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RESUMESHIM_") and k != "LD_PRELOAD"}
    if column in ("shim", "store"):
        env["LD_PRELOAD"] = SHIM
    if column == "empty":
        env["LD_PRELOAD"] = os.path.join(WORK, "empty.so")
    if column == "store":
        env["RESUMESHIM_STORE"] = new_store()
    return env


def new_store():
    """A fresh private store, removed at the end: mode 0700, in memory like
    the resumeshim command's default ($XDG_RUNTIME_DIR): on a disk file
    system each rename is a journal write."""
    store = tempfile.mkdtemp(prefix="resumeshim-bench-store.", dir=STORE_PARENT)
    STORES.append(store)
    return store


def run(case, group, column, rep, argv, env, server=None, requests=None, conns=None,
        skip=1, timed=None, quiet=False):
    """One run. requests: log lines the server will write; conns: connections
    the figures are per; skip: leading log lines left out of the resumed
    share (the warm-up, or the first burst); quiet: the program's stderr
    (a summary line per run) to /dev/null."""
    before = len(server.lines()) if server else 0
    cpu0 = server.cpu_ns() if server else 0
    outfile, rssfile = os.path.join(WORK, "out"), os.path.join(WORK, "rss")
    fd = os.open(outfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # Peak RSS through GNU time: a process spawned from this one inherits
    # Python's high-water mark into its own ru_maxrss at exec, while one
    # forked from the small time program starts near zero.
    argv = ["/usr/bin/time", "-f", "%M", "-o", rssfile, *argv]
    t0 = time.monotonic()
    actions = [(os.POSIX_SPAWN_DUP2, fd, 1)]
    if quiet:
        actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0))
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(fd)
    with open(outfile) as f:
        out = f.read()
    fields = dict(kv.split("=", 1) for kv in out.split() if "=" in kv)
    if status != 0 or int(fields.get("failed", 0)) != 0:
        print(f"bench: {case} {group} {column}: exit {status}: {out.strip()}", file=sys.stderr)
    row = {"case": case, "group": group, "column": column, "rep": rep,
           "status": os.waitstatus_to_exitcode(status), "conns": conns}
    if server:
        lines = server.lines_since(before, requests)
        row["server_cpu_us"] = (server.cpu_ns() - cpu0) / 1000 / conns
        # Log order is accept order: a thread done early may connect again
        # before the last of the first burst, so excuse the first `skip` full
        # handshakes wherever they fall.
        resumed = sum(map(server.resumed, lines))
        later = len(lines) - skip
        row["resumed_share"] = 1 - max(0, len(lines) - resumed - skip) / later if later > 0 else 0
        row["resumed"] = resumed
        row["resumed_after"] = sum(map(server.resumed, lines[skip:]))
        row["logged"] = len(lines)
    if timed and "elapsed_us" in fields:
        # The C client's own figures for its threaded phase.
        row["conn_per_s"] = timed / (int(fields["elapsed_us"]) / 1e6)
        row["ms_per_conn"] = int(fields["elapsed_us"]) / 1000 / timed
        row["client_cpu_us"] = int(fields["cpu_us"]) / timed
    else:
        row["conn_per_s"] = conns / wall
        row["ms_per_conn"] = wall * 1000 / conns
        row["client_cpu_us"] = (ru.ru_utime + ru.ru_stime) * 1e6 / conns
    with open(rssfile) as f:
        row["rss_kib"] = int(f.read().split()[-1])
    row["wall_s"] = wall
    RUNS.append(row)
    return row


def record(case, group, column, **figures):
    """A row of raw.csv that is no timed run of run(): a count, or the
    median of many runs."""
    RUNS.append({"case": case, "group": group, "column": column, "rep": 0, **figures})


def shell_loop(body, count="$1"):
    """A shell loop running BODY COUNT times (a shell expression)."""
    return f'i=0; while [ "$i" -lt "{count}" ]; do {body}; i=$((i+1)); done'


def done(what):
    print(f"bench: {what} done", file=sys.stderr)


def client_argv(port, ca, *opts):
    return [CLIENT, "--cafile", ca, "--quiet", "--timing", *opts, str(port)]


def make_empty():
    """The empty library the "empty" column preloads. Without it the loader
    prints an error and goes on, and that column would measure that."""
    if not os.path.exists(os.path.join(WORK, "empty.so")):
        sh("cc -shared -fPIC -x c -o empty.so - <<'EOF'\nint resumeshim_bench_empty;\nEOF")


def instructions(argv, env, lookups=False):
    """Instructions the program executes, counted by callgrind: unlike time,
    not disturbed by whatever else the machine runs."""
    cg = os.path.join(WORK, "callgrind.out")
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg, *argv],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out = done.stderr
    # A run that failed counted other work than the case's: no number.
    if done.returncode != 0:
        raise RuntimeError(f"callgrind: {argv[0]} exited {done.returncode}: {out[-500:]}")
    for line in out.splitlines():
        if "refs:" in line:
            total = int(line.split("refs:")[1].replace(",", ""))
            return (total, looked_up(cg)) if lookups else total
    raise RuntimeError(f"callgrind: {out[-500:]}")


def looked_up(cg):
    """Instructions spent in dlvsym and dlopen (inclusive), from a callgrind
    output file: what finding OpenSSL's functions and classifying the
    calling modules cost."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                          "--threshold=100", cg], capture_output=True, text=True).stdout
    total = 0
    for line in out.splitlines():
        if ":dlvsym@@" in line or ":dlopen@@" in line:
            total += int(line.split()[0].replace(",", ""))
    return total
