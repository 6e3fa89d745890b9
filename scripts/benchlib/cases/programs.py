"""programs: real programs making one request after another, in one
process or run once per request (through the resumeshim command)."""
import os
import shutil
import subprocess
import sys

from ..config import FETCH, LABEL, PY, QUICK, REPS, ROOT
from ..runners import WORK, done, environ, new_store, run, shell_loop


# The columns of the programs: trusting the bundle without the shim and
# with it, and the bound: with the shim, trusting the test CA alone (what
# the shim could give if loading trust cost nothing).
PROGRAM_COLUMNS = ["none", "shim", "bound"]


def program_env(col, how):
    """A program column's environment: how is "preload" (LD_PRELOAD) or
    "store" (and a fresh store)."""
    if col == "none":
        return environ("none")
    return environ("store" if how == "store" else "shim")


def program_cases(srv, nothing, ca, bundle):
    n = 40 if QUICK else 100
    url = f"https://localhost:{srv.port}/"
    bare = f"https://localhost:{nothing.port}/"
    php = ("$c = stream_context_create(['ssl' => ['cafile' => $argv[2]]]);"
           "for ($i = 0; $i < (int)$argv[3]; $i++) file_get_contents($argv[1], false, $c);")
    curl_loop = shell_loop('curl -sS -o /dev/null --cacert "$2" "$1" || exit 1', "$3")
    requests_loop = ("import requests, sys\n"
                     "for _ in range(int(sys.argv[3])):\n"
                     "    requests.get(sys.argv[1], verify=sys.argv[2]).raise_for_status()\n")
    lwp = ("use LWP::UserAgent; my $ua = LWP::UserAgent->new(keep_alive => 0, "
           "ssl_opts => {SSL_ca_file => $ARGV[1]}); "
           "for (1 .. $ARGV[2]) { $ua->get($ARGV[0])->is_success or exit 1 }")
    ruby = ("u = URI(ARGV[0]); ARGV[2].to_i.times { Net::HTTP.start(u.host, u.port, "
            "use_ssl: true, ca_file: ARGV[1]) { |h| h.get('/').value } }")
    # (name, how, server, argv(CA file)); the server must log a line per
    # request. curl through the resumeshim command is among the one-shot
    # programs (oneshot_cases).
    programs = [
        ("curl once per request, LD_PRELOAD and the store", "store", srv,
         lambda c: ["/bin/sh", "-c", curl_loop, "-", url, c, str(n)]),
        ("curl once per request, server issues no tickets (LD_PRELOAD and the store)", "store",
         nothing, lambda c: ["/bin/sh", "-c", curl_loop, "-", bare, c, str(n)]),
        ("Python urlopen, a default context per request, one process", "preload", srv,
         lambda c: [PY, FETCH, url, c, str(n)]),
        ("Python requests.get in a loop, one process", "preload", srv,
         lambda c: [PY, "-c", requests_loop, url, c, str(n)]),
        ("PHP file_get_contents, one process", "preload", srv,
         lambda c: ["/usr/bin/php", "-r", php, url, c, str(n)]),
        ("Perl LWP, one process", "preload", srv,
         lambda c: ["/usr/bin/perl", "-e", lwp, url, c, str(n)]),
        ("Ruby Net::HTTP, one process", "preload", srv,
         lambda c: ["/usr/bin/ruby", "-rnet/http", "-e", ruby, url, c, str(n)]),
    ]
    for name, how, server, argv in programs:
        for rep in range(REPS):
            for col in PROGRAM_COLUMNS:
                run("programs", name, col, rep, argv(ca if col == "bound" else bundle),
                    program_env(col, how),
                    server, requests=n, conns=n)
        done(name)
# A one-shot program's columns: as it is; each run through the resumeshim
# command; and the bound: through it too, trusting the test CA alone.
ONESHOT_COLUMNS = ["none", "command", "bound"]
ONESHOT_SKIPPED = []  # (program, why), shown under its table


class OneShot:
    """A program run once per request. argv(trust) and env(trust) give its
    command line and the variables it needs, trust being "default" (what
    it trusts by default, with the test CA added) or "alone" (the test CA
    and nothing else); lines: what the server logs per run; runs: runs per
    column and repetition (fewer for programs slow to start)."""

    def __init__(self, name, argv, env=None, lines=1, runs=10):
        self.name, self.argv, self.lines = name, argv, lines
        self.env = env or (lambda trust: {})
        self.runs = max(2, runs // 2) if QUICK else runs


def oneshot_programs(port, ca, bundle, empty):
    """The programs of tests/matrix-programs.bats and matrix-gnutls.bats,
    each fetching one page. What each trusts by default, found with strace
    on Debian 12: curl, Python, PHP, Perl and Ruby the file they are given
    (the system's bundle otherwise); wget (GnuTLS) the system trust, and
    its --ca-certificate as well, unless --ca-directory is given; lynx
    (GnuTLS) $SSL_CERT_FILE instead of the system trust; git's libcurl-gnutls
    GIT_SSL_CAINFO instead of the system's bundle, and every file of
    /etc/ssl/certs as well, unless GIT_SSL_CAPATH names another directory."""
    url = f"https://localhost:{port}/"
    progs = os.path.join(ROOT, "tests/programs")
    cafile = lambda trust: bundle if trust == "default" else ca
    return [
        OneShot("curl", lambda t: ["curl", "-sS", "-o", "/dev/null", "--cacert", cafile(t), url]),
        OneShot("wget", lambda t: ["wget", "-q", "-O", "/dev/null", f"--ca-certificate={ca}"]
                + ([] if t == "default" else [f"--ca-directory={empty}"]) + [url]),
        # Dumb HTTP (nginx serves the files): two requests on one connection.
        OneShot("git ls-remote", lambda t: ["git", "ls-remote", f"{url}git/repo.git"],
                lambda t: {"GIT_SSL_CAINFO": cafile(t), "GIT_TERMINAL_PROMPT": "0",
                           **({} if t == "default" else {"GIT_SSL_CAPATH": empty})}, lines=2),
        OneShot("lynx -dump", lambda t: ["lynx", "-dump", "-nolist", url],
                lambda t: {"SSL_CERT_FILE": cafile(t)}),
        OneShot("Python urlopen", lambda t: [PY, FETCH, url, cafile(t), "1"], runs=5),
        OneShot("PHP file_get_contents",
                lambda t: ["php", f"{progs}/fetch.php", "localhost", str(port), "1", cafile(t)]),
        OneShot("Perl LWP", lambda t: ["perl", f"{progs}/lwp.pl", "localhost", str(port), "1",
                                       cafile(t)], runs=4),
        OneShot("Ruby Net::HTTP", lambda t: ["ruby", f"{progs}/fetch.rb", "localhost",
                                             str(port), "1", cafile(t)], runs=3),
    ]


def oneshot_loop(prog, trust, runs, prefix):
    """RUNS runs of the program one after another in a shell loop, each
    through PREFIX (the resumeshim command and its options), its output
    dropped."""
    loop = "n=$1; shift; " + shell_loop('"$@" >/dev/null || exit', "$n")
    return ["/bin/sh", "-c", loop, "-", str(runs), *prefix, *prog.argv(trust)]


def oneshot_try(prog, srv, trust, env, prefix):
    """One run outside the figures: None, or why the program cannot be
    measured here (missing, failing, or not making its requests)."""
    before = len(srv.lines())
    try:
        p = subprocess.run(oneshot_loop(prog, trust, 1, prefix), env=env, cwd=WORK,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return "a run took over 60 s"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["nothing on stderr"])[-1]
        return f"exit {p.returncode}: {last[:160]}"
    got = len(srv.lines_since(before, prog.lines))
    return None if got == prog.lines else f"{got} requests logged a run, not {prog.lines}"


def oneshot_cases(srv, ca, bundle):
    """Each program run once per request in a shell loop, without the shim
    and through the resumeshim command, trusting what it trusts by default
    (with the test CA added), and the bound: through the command, trusting
    the test CA alone. Each column with the command keeps one store for the
    whole case, filled by a run outside the figures first, as a program
    run again and again finds it."""
    empty = os.path.join(WORK, "no-certificates")
    os.makedirs(empty, exist_ok=True)
    home = os.path.join(WORK, "home")  # git and lynx read their settings there
    os.makedirs(home, exist_ok=True)
    command = os.path.join(ROOT, "scripts/resumeshim")
    for prog in oneshot_programs(srv.port, ca, bundle, empty):
        trust = {"none": "default", "command": "default", "bound": "alone"}
        prefix, envs = {}, {}
        for col in ONESHOT_COLUMNS:
            envs[col] = {**environ("none"), "HOME": home, **prog.env(trust[col])}
            prefix[col] = []
            if col != "none":
                prefix[col] = [command, "--store", new_store()]
        exe = prog.argv("default")[0]
        why = None if shutil.which(exe) else f"{exe} is not installed"
        for col in ONESHOT_COLUMNS:
            if why is None:
                why = oneshot_try(prog, srv, trust[col], envs[col], prefix[col])
                if why and col != "none":
                    why = f"{LABEL[col]}: {why}"
        if why:
            ONESHOT_SKIPPED.append((prog.name, why))
            print(f"bench: {prog.name} skipped: {why}", file=sys.stderr)
            continue
        for rep in range(REPS):
            for col in ONESHOT_COLUMNS:
                run("oneshot", prog.name, col, rep,
                    oneshot_loop(prog, trust[col], prog.runs, prefix[col]), envs[col], srv,
                    requests=prog.runs * prog.lines, conns=prog.runs, skip=0)
        done(f"{prog.name} once per request")
