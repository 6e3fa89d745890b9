"""The charts: DIR/results.png (the C client) and DIR/programs.png (programs
run once per request), through gnuplot."""
import os
import subprocess

from .cases.programs import ONESHOT_COLUMNS
from .config import COLUMNS, LABEL, OUT
from .medians import groups, med
from .runners import WORK

# Both charts: clustered bars, one a column, from zero.
BARS = """set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left noenhanced
set grid ytics
set yrange [0:*]
"""


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def oneshot_chart():
    """Milliseconds a run of each program run once per request, a group of
    bars per program: no shim, through resumeshim, bound."""
    path = os.path.join(WORK, "chart-oneshot.dat")
    with open(path, "w") as f:
        key = {"none": "no shim", "command": "through resumeshim",
               "bound": "bound: through resumeshim, trusting the test CA alone"}
        f.write("program " + " ".join(f'"{key[c]}"' for c in ONESHOT_COLUMNS) + "\n")
        for g in groups("oneshot"):
            ratio = (med("oneshot", g, "command", "conn_per_s")
                     / med("oneshot", g, "none", "conn_per_s"))
            # gnuplot reads a backslash and n in a quoted string as a line break.
            f.write(f'"{g}\\n{ratio:.2f}×" ' + " ".join(
                f"{med('oneshot', g, c, 'ms_per_conn'):.1f}" for c in ONESHOT_COLUMNS) + "\n")
    script = f"""
set terminal pngcairo size 1400,600 font "DejaVu Sans,11"
set output "{os.path.join(OUT, 'programs.png')}"
set title "libresumeshim: programs run once per request, trusting what they trust by default\\n(under each: runs a second through resumeshim over runs a second without the shim)" noenhanced
{BARS}set xtics scale 0 noenhanced
set bmargin 4
set ylabel "milliseconds a run (less is better)"
plot for [i=2:{1 + len(ONESHOT_COLUMNS)}] "{path}" using i:xtic(1) title columnheader(i)
"""
    gnuplot(script)


def chart():
    """Two panels: connections/s and client CPU per connection of the C
    client cases, one bar per column."""
    files = []
    for key in ("conn_per_s", "client_cpu_us"):
        path = os.path.join(WORK, f"chart-{key}.dat")
        with open(path, "w") as f:
            f.write("group " + " ".join(f'"{LABEL[c]}"' for c in COLUMNS) + "\n")
            for g in groups("client"):
                f.write(f'"{g}" ' + " ".join(f"{med('client', g, c, key):.1f}" for c in COLUMNS)
                        + "\n")
        files.append(path)
    script = f"""
set terminal pngcairo size 1400,900 font "DejaVu Sans,10"
set output "{os.path.join(OUT, 'results.png')}"
set multiplot layout 2,1 title "libresumeshim: the unmodified C client, one connection per request"
{BARS}set xtics rotate by 20 right scale 0 noenhanced
set ylabel "connections / s (more is better)"
plot for [i=2:5] "{files[0]}" using i:xtic(1) title columnheader(i)
set ylabel "client CPU µs / connection (less is better)"
plot for [i=2:5] "{files[1]}" using i:xtic(1) title columnheader(i)
unset multiplot
"""
    gnuplot(script)
