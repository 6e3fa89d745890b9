"""The README's headline: a few figures of examples/bench/results.md, the
charts, links to the rest, written between the README's markers."""
import os
import sys

from .config import OUT, ROOT


README_BEGIN = ("<!-- From here to the end marker, `make bench` writes the headline of "
                "examples/bench/results.md. -->")
README_END = "<!-- End of the benchmark headline. -->"


def result_cells(text):
    """The tables of a results.md: {(section, case, column): cell}, the
    section being the number of its heading ("1." ...) or "Targets"."""
    cells, section, head = {}, "", None
    for line in text.splitlines():
        if line.startswith("## "):
            section, head = line[3:].split(" ", 1)[0], None
        elif not line.startswith("|"):
            head = None
        elif head is None:
            head = [c.strip() for c in line.strip("|").split("|")]
        elif not line.startswith("|---"):
            row = [c.strip() for c in line.strip("|").split("|")]
            for col, cell in zip(head[1:], row[1:]):
                cells[(section, row[0], col)] = cell
    return cells


def headline(text):
    """A few figures of a results.md, for the README: what resumption buys
    the C client against doing nothing and against native resumption, the
    one-shot program, the server mode, and how many targets were met; first
    the programs run once per request, with their chart."""
    cells = result_cells(text)

    def row(label, section, case, cols):
        vals = [cells.get((section, case, c)) for c in cols]
        return None if None in vals else f"| {label} | " + " | ".join(vals) + " |"

    conn = ["no shim conn/s", "shim conn/s", "native conn/s"]
    cpu = ["no shim client µs/conn", "shim client µs/conn", "native client µs/conn"]
    rows = [row("TLS 1.3, connections/s", "1.", "TLS 1.3 ECDSA ×1", conn),
            row("TLS 1.3, client CPU µs per connection", "1.", "TLS 1.3 ECDSA ×1", cpu),
            row("TLS 1.2, connections/s", "1.", "TLS 1.2 ECDSA ×1", conn),
            row("TLS 1.2, client CPU µs per connection", "1.", "TLS 1.2 ECDSA ×1", cpu),
            row("TLS 1.3, instructions per connection (callgrind)", "5.",
                "resumed connection, TLS 1.3 ECDSA",
                ["no shim instructions", "shim instructions", "native instructions"])]
    rows = [r for r in rows if r]
    out = []
    machine_line = next((l for l in text.splitlines() if l.startswith("Machine: ")), None)
    if machine_line:
        out += [machine_line.split(" Columns: ", 1)[0], ""]
    oneshot = [case for (sec, case, col) in cells if sec == "2." and col == "bound ms/run"]
    if oneshot:
        out += ["Programs run once per request, each trusting what it trusts by default "
                "(the system's CA bundle or trust, the test CA added), against nginx on "
                "127.0.0.1; *bound*: through `resumeshim`, trusting the test CA alone:", "",
                "| milliseconds a run | no shim | through resumeshim | bound | speed-up |",
                "|---|---|---|---|---|"]
        for case in oneshot:
            c = [cells.get(("2.", case, k), "–") for k in (
                "no shim ms/run", "through resumeshim ms/run", "bound ms/run",
                "through resumeshim/no shim runs/s")]
            out.append(f"| {case} | {c[0]} | {c[1]} | {c[2]} | {c[3]}× |")
        out += ["", "![Programs run once per request: milliseconds a run]"
                "(examples/bench/programs.png)", ""]
    if rows:
        out += ["The unmodified C client (`tests/client.c`), one connection per request, "
                "one after another, ECDSA certificate; *native*: the client keeps its last "
                "session and offers it itself:", "",
                "| | no shim | shim | native |", "|---|---|---|---|", *rows, ""]
    more = []
    curl = "curl once per request, LD_PRELOAD and the store"
    c = [cells.get(("2.", curl, k)) for k in ("no shim resumed", "shim resumed", "no shim conn/s",
                                               "shim conn/s", "bound conn/s")]
    if None not in c:
        more.append(f"- curl run once per request, trusting the system bundle, resumed {c[0]} "
                    f"of its connections without the shim, {c[1]} with it and the store, at "
                    f"{c[2]} and {c[3]} requests a second ({c[4]} trusting one certificate: "
                    "loading the bundle costs it more than the handshake).")
    gun = "gunicorn -w 1, 200 one after another"
    g = [cells.get(("7.", gun, k)) for k in ("before conn/s", "after conn/s",
                                             "after/before server CPU")]
    if None not in g:
        more.append(f"- gunicorn (one worker, a TLS context per connection) served {g[0]} "
                    f"connections/s as it is and {g[1]} with the server mode, at "
                    f"{g[2]}× the server CPU per connection.")
    targets = [v for (sec, _, col), v in cells.items() if sec == "Targets" and col == "result"]
    met = sum(v == "met" for v in targets)
    missed = sum(v == "**missed**" for v in targets)
    if met + missed:
        more.append(f"- {met} of {met + missed} targets met; what the missed ones come down "
                    "to is in [examples/bench/README.md](examples/bench/README.md).")
    if more:
        out += more + [""]
    out += ["![The C client: connections per second and client CPU per connection]"
            "(examples/bench/results.png)", "",
            "Every table: [examples/bench/results.md](examples/bench/results.md); every run: "
            "[examples/bench/raw.csv](examples/bench/raw.csv)."]
    return out


def update_readme(readme_path=None, results_path=None):
    """The README shows the headline of the committed results, between its
    markers; the tables stay in results.md."""
    path = readme_path or os.path.join(ROOT, "README.md")
    with open(path) as f:
        readme = f.read()
    if README_BEGIN not in readme or README_END not in readme:
        print("bench: README.md has no markers; not updated", file=sys.stderr)
        return
    with open(results_path or os.path.join(OUT, "results.md")) as f:
        body = headline(f.read())
    head, rest = readme.split(README_BEGIN, 1)
    tail = rest.split(README_END, 1)[1]
    with open(path, "w") as f:
        f.write(head + README_BEGIN + "\n" + "\n".join(body).strip() + "\n" + README_END + tail)
