"""Medians of the runs by case, group and column, their formats, and the
Markdown table of a case."""
import statistics

from .config import LABEL
from .runners import RUNS


def med(case, group, column, key):
    vals = [r[key] for r in RUNS if r["case"] == case and r["group"] == group
            and r["column"] == column and r.get(key) is not None]
    return statistics.median(vals) if vals else None


def groups(case):
    seen = []
    for r in RUNS:
        if r["case"] == case and r["group"] not in seen:
            seen.append(r["group"])
    return seen


def fmt(v, digits=0):
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def pct(v):
    return "–" if v is None else f"{100 * v:.1f} %"


def table(case, columns, metrics, ratio_to=None):
    """Markdown: one row per group, per column each metric's median."""
    head = ["case"]
    for c in columns:
        head += [f"{LABEL[c]} {m[0]}" for m in metrics]
    if ratio_to:
        head += [f"{LABEL[a]}/{LABEL[b]} {m}" for a, b, m, _ in ratio_to]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in groups(case):
        row = [g]
        for c in columns:
            for _, key, f in metrics:
                row.append(f(med(case, g, c, key)))
        for a, b, _, key in ratio_to or []:
            va, vb = med(case, g, a, key), med(case, g, b, key)
            row.append(f"{va / vb:.3f}" if va and vb else "–")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
