"""command: the resumeshim command against the variables it sets exported."""
import os
import statistics
import subprocess
import time

from ..config import CLIENT, QUICK, REPS, ROOT
from ..runners import WORK, done, environ, record, run, sh, shell_loop


START = "/bin/true, one start (single starts, paired)"


def command_cases(srv, ca):
    """The resumeshim command as make install puts it, against the same
    program with the variables it would set exported (LD_PRELOAD and
    RESUMESHIM_STORE, one fresh private store for both columns): each run
    once per iteration of a shell loop, as the command is used. And the
    store's system calls in a resumed one-shot run of the C client."""
    prefix = os.path.join(WORK, "prefix")
    sh(f"make -s -C {ROOT} install PREFIX={prefix} >/dev/null")
    cmd, lib = os.path.join(prefix, "bin/resumeshim"), os.path.join(prefix, "lib/libresumeshim.so")
    store = environ("store")["RESUMESHIM_STORE"]

    def env(col):
        e = environ("none")
        e["RESUMESHIM_STORE"] = store
        if col in ("exported", "exec-only"):
            e["LD_PRELOAD"] = lib
        return e

    # The yardstick: what any command that execs the program costs, a
    # static program doing nothing else, built as the command is.
    floor = os.path.join(WORK, "exec-only")
    sh(f"$(command -v musl-gcc || echo cc) -O2 -static -x c -o {floor} - <<'EOF'\n"
       "#include <unistd.h>\n"
       "int main(int argc, char **argv) { (void)argc; execv(argv[1], argv + 1); return 127; }\n"
       "EOF")
    # Single starts, spawned in turn (A B C, C B A, ...): paired run by run,
    # so that the machine's drift falls on every column alike.
    starts = {"exported": ["/bin/true"], "command": [cmd, "/bin/true"],
              "exec-only": [floor, "/bin/true"]}
    times = {c: [] for c in starts}
    null = os.open(os.devnull, os.O_WRONLY)
    k = 500 if QUICK else 3000
    for i in range(k + 50):
        for col in list(starts)[::1 if i % 2 else -1]:
            t0 = time.perf_counter_ns()
            pid = os.posix_spawn(starts[col][0], starts[col], env(col),
                                 file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
            os.waitpid(pid, 0)
            if i >= 50:
                times[col].append((time.perf_counter_ns() - t0) / 1e6)
    os.close(null)
    # One row a column (the median): raw.csv keeps runs, not thousands of starts.
    for col, ms in times.items():
        record("command", START, col, conns=len(ms), ms_per_conn=statistics.median(ms))
    n = 40 if QUICK else 100
    url = f"https://localhost:{srv.port}/"
    for name, conns, body, extra, log in (
            ("curl, one process per request", n,
             'curl -sS -o /dev/null --cacert "$3" "$4" || exit 1', [ca, url], srv),):
        loops = {c: shell_loop(p + body) for c, p in (("exported", ""), ("command", '"$2" '))}
        for rep in range(REPS):
            for col in ("exported", "command"):
                run("command", name, col, rep,
                    ["/bin/sh", "-c", loops[col], "-", str(conns), cmd, *extra], env(col), log,
                    requests=conns if log else None, conns=conns)
    # Counted from the trace, not the shim: every call naming the store's
    # directory or a file in it (strace -y shows a descriptor's path).
    trace = os.path.join(WORK, "store.trace")
    argv = [CLIENT, "--cafile", ca, "--quiet", "--n", "1", str(srv.port)]
    for _ in range(2):
        subprocess.run(argv, env=env("exported"), stdout=subprocess.DEVNULL, check=True)
    subprocess.run(["strace", "-f", "-y", "-o", trace, *argv], env=env("exported"),
                   stdout=subprocess.DEVNULL, check=True)
    with open(trace) as f:
        calls = [line.split(None, 1)[1].split("(", 1)[0] for line in f if store in line]
    record("storecalls", "the store's system calls, a resumed one-shot", "exported",
           syscalls=len(calls),
           detail=", ".join(f"{c} {calls.count(c)}" for c in sorted(set(calls))))
    done("command")
