"""The command line (--quick, --only, --out), the programs measured and
the sizes of the runs."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "libresumeshim.so")
CLIENT = os.path.join(ROOT, "tests/bin/client")
GNUTLSCLIENT = os.path.join(ROOT, "tests/bin/gnutlsclient")
PSKSERVER = os.path.join(ROOT, "tests/bin/pskserver")
RELAY = os.path.join(ROOT, "tests/bin/delayrelay")
FETCH = os.path.join(ROOT, "examples/fetch.py")
PY = "/usr/bin/python3"
GUNICORN = "/usr/bin/gunicorn"  # Debian's, run by /usr/bin/python3
TEST_SERVERS = os.path.join(ROOT, "tests/servers")

GROUPS = ("client", "burst", "yardstick", "programs", "gnutls", "latency", "costs",
          "memory", "instructions", "servers", "command")
USAGE = "usage: scripts/bench [--quick] [--only GROUP,...] [--out DIR]"


def _options(argv):
    """The command line, read strictly: a word it does not know stops the
    bench before it starts anything (a mistyped option must not run the
    whole bench into examples/bench)."""
    quick, only, out = False, None, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            print(USAGE + "\ngroups: " + ",".join(GROUPS) + "\n(see the head of scripts/bench)")
            sys.exit(0)
        elif a == "--quick":
            quick = True
        elif a in ("--only", "--out") and args:
            if a == "--only":
                only = args.pop(0).split(",")
            else:
                out = args.pop(0)
        else:
            sys.exit(f"bench: {a!r}: " + ("needs a value" if a in ("--only", "--out")
                                          else "not an option") + "\n" + USAGE)
    return quick, only, out


QUICK, ONLY, OUT = _options(sys.argv[1:])
if ONLY is not None and not set(ONLY) <= set(GROUPS):
    sys.exit(f"bench: --only takes groups among {','.join(GROUPS)}")
OUT = OUT or os.path.join(
    ROOT, "build/bench-only" if ONLY else "build/bench-quick" if QUICK else "examples/bench")
if ONLY and os.path.realpath(OUT) == os.path.realpath(os.path.join(ROOT, "examples/bench")):
    sys.exit("bench: --only writes part of the results: not into examples/bench")
REPS = 3 if QUICK else 7
# Connections per thread of the C client, by thread count. With 50 and 10,
# a TLS 1.2 thread row's timed phase lasted about 0.1 s (400 connections at
# 3,600 a second), and its shim and shim + store columns, the same code
# there, differed by up to 16 %: more than the targets' margins. 1,600
# connections a phase.
PER_THREAD = {1: 100, 8: 12, 64: 3} if QUICK else {1: 400, 8: 200, 64: 25}
POOL_SIZE = 8  # RESUMESHIM_POOL_SIZE's default

# The yardstick's added work (µs of computation after each handshake), and
# its columns: native resumption with each, beside the shim.
BUSY_US = (6, 12, 24)
YARDSTICK = ["native", *(f"busy{u}" for u in BUSY_US), "shim"]

# The columns of most cases, and every column's label in the tables.
COLUMNS = ["none", "shim", "store", "native"]
LABEL = {"none": "no shim", "shim": "shim", "store": "shim + store", "native": "native",
         "bound": "bound",
         "empty": "empty library preloaded", "before": "before", "after": "after",
         "exported": "variables exported", "command": "through resumeshim",
         "exec-only": "through a static program that only execs",
         **{f"busy{u}": f"native + {u} µs" for u in BUSY_US}}
