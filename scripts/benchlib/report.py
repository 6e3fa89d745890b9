"""DIR/results.md (its sections, or with --only those whose groups ran) and
DIR/raw.csv (every run)."""
import csv
import os
import platform
import subprocess

from .cases.programs import ONESHOT_COLUMNS, ONESHOT_SKIPPED, PROGRAM_COLUMNS
from .cases.servers import SERVER_COLUMNS
from .charts import chart, oneshot_chart
from .config import COLUMNS, GUNICORN, LABEL, ONLY, OUT, POOL_SIZE, QUICK, REPS, YARDSTICK
from .medians import fmt, groups, med, pct, table
from .runners import RUNS, STORE_PARENT
from .servers import SYSTEM_BUNDLE
from .targets import targets


def memory_table():
    gs = groups("memory")
    if not gs:
        return ""
    rss = {(g, c): med("memory", g, c, "rss_kib") for g in gs for c in ("none", "shim")}
    lines = ["| client | peak RSS (KiB) | resumed |", "|---|---|---|"]
    for g in gs:
        for c in ("none", "shim"):
            if rss[(g, c)] is not None:
                lines.append(f"| {LABEL[c]}, {g} | {fmt(rss[(g, c)])} | "
                             f"{fmt(med('memory', g, c, 'resumed'))} |")
    h = int(gs[0].split()[0])
    base, one = rss[(gs[0], "none")], rss[(gs[0], "shim")]
    full = rss[(gs[1], "shim")]
    out = ["\n".join(lines), "",
           f"Per server (pool with one ticket): {(one - base) * 1024 / h:,.0f} bytes; "
           f"per further ticket: {(full - one) * 1024 / (h * (POOL_SIZE - 1)):,.0f} bytes "
           f"(RSS differences over {h} servers)."]
    if len(gs) > 2:
        out.append(f"With {2 * h} servers against the default RESUMESHIM_MAX_HOSTS of 1024: "
                   f"{fmt(rss[(gs[2], 'shim')])} KiB, against {fmt(full)} KiB at {h}: the "
                   "least recently used pools are forgotten, so memory stays bounded by "
                   "pool size × RESUMESHIM_MAX_HOSTS.")
    return "\n".join(out)


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    osname = "Linux"
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
    ossl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    ngx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    return (f"{os.cpu_count()} × {cpu}, {osname}, kernel {platform.release()}, {ossl}, "
            f"{ngx.replace('nginx version: ', '')}")


def server_versions():
    if not groups("servers"):
        return "gunicorn"
    out = subprocess.run([GUNICORN, "--version"], capture_output=True, text=True).stdout
    version = out.strip().replace("(version ", "").rstrip(")")
    return f"{version} (Python {platform.python_version()})"


ONESHOT_IMAGE = "![Programs run once per request: milliseconds a run](programs.png)"
ONESHOT_CAPTION = ("Programs run once per request ([section 2](#2-real-programs-one-request-"
                   "after-another)), each trusting what it trusts by default: milliseconds a "
                   "run without the shim, through `resumeshim`, and the bound (the same trusting "
                   "the test CA alone); the chart's labels give runs a second through "
                   "`resumeshim` over runs a second without the shim.")


def oneshot_report():
    """Section 2's table of the programs run once per request, and what
    could not be measured."""
    if not groups("oneshot") and not ONESHOT_SKIPPED:
        return []
    runs = [str(k) for k in sorted({r["conns"] for r in RUNS if r["case"] == "oneshot"})]
    md = ["### Once per request, through resumeshim", "",
          "Each program run once per request in a shell loop "
          f"({', '.join(runs[:-1]) + ' or ' if len(runs) > 1 else ''}{''.join(runs[-1:])} runs a "
          "column, fewer for the programs slow to start), against nginx (the certificate of section 1). **no shim**: as it is; "
          "**through resumeshim**: each run through `scripts/resumeshim --store DIR`, one "
          "store per column, filled by a run before the figures, as a program run again and "
          "again finds it; **bound**: the same, trusting the test CA alone. Each trusts "
          "what it trusts by default, the test CA added: curl, Python, PHP, Perl and Ruby "
          "the copy of the bundle above as their CA file; wget (GnuTLS) the system's trust "
          "and `--ca-certificate` (the bound: and `--ca-directory` of an empty directory, "
          "which leaves the system's trust out); lynx (GnuTLS) `SSL_CERT_FILE` (the copy of "
          "the bundle); git (`ls-remote` over dumb HTTP: one connection, two requests a run, "
          "through libcurl-gnutls on Debian 12) `GIT_SSL_CAINFO` (the copy of the bundle) "
          "and every file of `/etc/ssl/certs` (the bound: `GIT_SSL_CAPATH` of an empty "
          "directory). *ms/run* and *CPU ms/run* are the whole loop's (the shell, the "
          "command, the program) over its runs; the ratios divide runs a second, medians "
          "of the alternating loops.", ""]
    if groups("oneshot"):
        md.append(table("oneshot", ONESHOT_COLUMNS,
                        [("ms/run", "ms_per_conn", lambda v: fmt(v, 1)),
                         ("resumed", "resumed_share", pct),
                         ("CPU ms/run", "client_cpu_us", lambda v: fmt(v / 1000, 1))],
                        [("command", "none", "runs/s", "conn_per_s"),
                         ("bound", "none", "runs/s", "conn_per_s")]))
    if ONESHOT_SKIPPED:
        md += ["", "Not measured here: " + "; ".join(f"{n} ({why})" for n, why in
                                                      ONESHOT_SKIPPED) + "."]
    return md


def report(elapsed):
    conn = ("conn/s", "conn_per_s", fmt)
    ccpu = ("client µs/conn", "client_cpu_us", fmt)
    scpu = ("server µs/conn", "server_cpu_us", fmt)
    share = ("resumed", "resumed_share", pct)
    rss = ("RSS KiB", "rss_kib", fmt)
    md = [f"# libresumeshim benchmarks{' (quick)' if QUICK else ''}", "",
          f"Machine: {machine()}. {REPS} alternating runs per column, medians; "
          f"whole run {elapsed:.0f} s. Columns: **no shim**; **shim** "
          "(`LD_PRELOAD=libresumeshim.so`); **shim + store** (and `RESUMESHIM_STORE` set to a "
          f"fresh private directory in {STORE_PARENT}, memory-backed like the resumeshim "
          "command's default); **native** (the client keeps its last session and offers "
          "it, no shim). *resumed* is the share of connections after the first (after the "
          "first burst with threads) that the server's log shows resumed; CPU is per "
          "connection, the server's from `/proc/PID/schedstat`.", "",
          ONESHOT_CAPTION, "", ONESHOT_IMAGE, "",
          "## Targets", "", "| target | result | measured |", "|---|---|---|", *targets(), "",
          "## 1. The unmodified C client (tests/client.c), one connection per request", "",
          "The client sets `TCP_NODELAY` here, so that the native column is a fair yardstick: "
          "without it, native TLS 1.2 resumption waits for a delayed ACK on every connection "
          "(section 3 shows it; the shim avoids it).", "",
          "Connections per second and resumed share:", "",
          table("client", COLUMNS, [conn, share],
                [("shim", "none", "conn/s", "conn_per_s"),
                 ("shim", "native", "conn/s", "conn_per_s")]), "",
          "CPU per connection (client's threaded phase, with threads after a warm burst of the same width; server's whole run) and peak RSS:", "",
          table("client", COLUMNS, [ccpu, scpu],
                [("shim", "native", "client CPU", "client_cpu_us")]), "",
          table("client", COLUMNS, [rss]), "",
          "Bursts after a sequential warm-up (connections of the burst resumed; tickets the "
          "shim's pool held when the burst started, from the warm-up's log):", "",
          table("burst", ["shim", "native"], [("resumed in the burst", "resumed_after", fmt),
                                              ("tickets held", "held", fmt)]),
          "",
          "What added work costs the client here, whoever adds it: native resumption with a "
          "fixed computation after each handshake (`--busy-us`: a chain of multiplications "
          "in registers, no cache misses), beside the shim, whose judgment of a resumed "
          "connection runs at that point; TLS 1.2 ECDSA, as the rows above, client CPU per "
          "connection and its ratio to native:", "",
          table("yardstick", YARDSTICK, [ccpu, conn],
                [(c, "native", "client CPU", "client_cpu_us") for c in YARDSTICK[1:]]),
          "",
          "## 2. Real programs, one request after another", "",
          "Each program runs its whole loop (start-up included) in one process, except curl, "
          "which runs once per request: only the store carries its sessions over. Each trusts "
          "what such a program trusts by default: a copy of the system's CA bundle "
          f"(`{SYSTEM_BUNDLE}`) with the test CA appended, given as its CA file. **no "
          "shim**: as it is; **shim**: `LD_PRELOAD=libresumeshim.so` (curl: and "
          "`RESUMESHIM_STORE`); **bound**: the "
          "same with the shim, trusting a CA file of the test CA alone, what the shim could "
          "give if loading the trust cost nothing. *conn/s* here: requests a second of the "
          "whole run.", "",
          table("programs", PROGRAM_COLUMNS, [conn, share, ccpu, scpu],
                [("shim", "none", "conn/s", "conn_per_s"),
                 ("bound", "none", "conn/s", "conn_per_s")]), "",
          "PHP installs a certificate verify callback on its contexts: before each offer the "
          "shim has that callback judge the session's server again (a chain verification, "
          "which a resumption otherwise saves the client).", "",
          *oneshot_report(), "",
          "## 3. Latency through a relay adding 10 ms each way", "",
          "Milliseconds per connection (connect, handshake, request, response). A TLS 1.2 "
          "resumption saves a round trip; a TLS 1.3 one does not (no early data). With Nagle "
          "on, a TLS 1.3 client's request waits after its Finished for the server's next "
          "segment (its tickets), a round trip, resumed or not, with or without the shim.", "",
          table("latency", COLUMNS, [("ms/conn", "ms_per_conn", lambda v: fmt(v, 1)), share]), "",
          "## 4. Costs", "",
          table("costs", ["none", "empty", "shim"],
                [("ms/op", "ms_per_conn", lambda v: fmt(v, 3)),
                 ("client µs/op", "client_cpu_us", lambda v: fmt(v, 1))],
                [("shim", "none", "client CPU", "client_cpu_us"),
                 ("shim", "none", "wall", "ms_per_conn")]), "",
          "## 5. Instructions (callgrind), per operation", "",
          "Timings on a shared machine wander by several percent; instruction counts do not. "
          "Per resumed connection, per miss, per keep-alive request (the difference between "
          "two runs of different lengths), and per start of `/bin/true`:", "",
          table("instructions", ["none", "empty", "shim", "native", "bound"],
                [("instructions", "instructions", fmt)],
                [("shim", "none", "", "instructions"),
                 ("shim", "native", "", "instructions")]), "",
          "## 6. Memory", "",
          "Memory of one client process after a full TLS 1.3 handshake to each of many "
          "servers (server names on one pskserver):", "", memory_table(), "",
          "## 7. Servers: a context per connection (gunicorn)", "",
          "A server that makes a new SSL context for every connection never resumes by "
          "itself: each context has a ticket key of its own. The sync workers of "
          f"{server_versions()} do, through `ssl.wrap_socket`, and so does "
          "`tests/servers/wrapserver.py` (one Python process). **before**: the server as it "
          "is; **after**: the same server started with `LD_PRELOAD=libresumeshim.so` and "
          "`RESUMESHIM_SERVER=1` (the shim's server mode: ticket keys shared by all the "
          "contexts and forked workers). In both the client is the C client under the shim, "
          "which offers a ticket whenever it has one: connections one after another or from "
          "8 threads at once, TLS 1.3, one request each, after one warm-up connection; one "
          "server per column for the whole case; the ECDSA P-256 certificate of section 1 "
          "unless the case says RSA-2048.", "",
          "*conn/s*: from the client's own timing; *server µs/conn*: CPU time of the "
          "server's processes (gunicorn's master and workers) per connection; *client "
          "µs/conn*: the client's CPU time per connection; *resumed*: as the application "
          "logged it (`session_reused`), after the first connection (after the first burst "
          "with threads); the last two columns divide after by before.", "",
          table("servers", SERVER_COLUMNS, [conn, scpu, ccpu, share],
                [("after", "before", "conn/s", "conn_per_s"),
                 ("after", "before", "server CPU", "server_cpu_us")]), "",
          "Client and server share the machine's cores, so the client's saving (certificate "
          "parsing and chain verification) counts in conn/s as well. A resumption saves the "
          "server its signature: little with ECDSA next to what a Python server spends on "
          "each connection (a new context that loads the certificate and key, the request), "
          "more with RSA-2048. With 4 workers, a connection wakes the idle workers as well, "
          "which find nothing left to accept: more server CPU per connection than with one.",
          "",
          "## 8. A GnuTLS client, one connection per request", "",
          "The GnuTLS test client (`tests/gnutlsclient.c`) makes its connections one after "
          "another in one process, `TCP_NODELAY` set; its figures are the whole process's "
          "(start-up and loading the trust file included). *native*: the client sets each "
          "connection's session on the next itself (`--keep`, as libcurl does), no shim.", "",
          table("gnutls", ["none", "shim", "native"], [conn, share, ccpu, scpu],
                [("shim", "none", "conn/s", "conn_per_s"),
                 ("shim", "native", "conn/s", "conn_per_s"),
                 ("shim", "native", "client CPU", "client_cpu_us")]), "",
          "## 9. The resumeshim command", "",
          "The command as `make install` puts it, against the same program with the variables "
          "it sets exported (`LD_PRELOAD`, and one fresh private `RESUMESHIM_STORE` for both "
          "columns): `/bin/true` started alone, the two spawned in turn, "
          f"{500 if QUICK else 3000} of each (medians); curl run once per iteration of a "
          "shell loop, against the nginx of section 1:", "",
          table("command", ["exported", "command", "exec-only"],
                [("ms/run", "ms_per_conn", lambda v: fmt(v, 3)), share],
                [("command", "exported", "wall", "ms_per_conn"),
                 ("exec-only", "exported", "wall", "ms_per_conn")]), "",
          "The last column is the yardstick: a static program that does nothing but exec "
          "the next, the least any command that runs the program costs.", "",
          "![chart](results.png)", ""]
    if ONLY:
        md = sections_run(md)
    with open(os.path.join(OUT, "results.md"), "w") as f:
        f.write("\n".join(md))
    keys = ["case", "group", "column", "rep", "status", "conns", "logged", "resumed",
            "resumed_after", "resumed_share", "conn_per_s", "ms_per_conn", "client_cpu_us",
            "server_cpu_us",
            "rss_kib", "wall_s", "instructions", "lookups", "syscalls"]
    with open(os.path.join(OUT, "raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in RUNS:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    if groups("client"):
        chart()
    if groups("oneshot"):
        oneshot_chart()


# The groups of cases each section of results.md shows.
SECTIONS = {"## 1.": ("client", "burst", "yardstick"), "## 2.": ("programs", "oneshot"), "## 3.": ("latency",),
            "## 4.": ("costs",), "## 5.": ("instructions",), "## 6.": ("memory",),
            "## 7.": ("servers",), "## 8.": ("gnutls",), "## 9.": ("command",)}


def sections_run(md):
    """With --only: the sections whose groups ran, the targets if any bear
    on them, and the chart if its cases ran."""
    out, keep = [], True
    for part in md:
        if part == "## Targets":
            keep = bool(targets())
        elif part.startswith("## "):
            keep = any(groups(c) for c in SECTIONS[part[:part.index(".") + 1]])
        elif part.startswith("![chart]"):
            keep = bool(groups("client"))
        elif part in (ONESHOT_CAPTION, ONESHOT_IMAGE):
            keep = bool(groups("oneshot"))
        if keep:
            out.append(part)
    return out
