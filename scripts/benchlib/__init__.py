"""The benchmarks of scripts/bench, in parts.

config: the command line, paths and sizes; servers: the test chains and
the servers the cases measure against; runners: one run of a program
(timing, CPU, peak RSS, the server's log), environments, callgrind;
cases/: what each group of cases measures, a module per group; medians,
targets, report, charts, headline: what results.md, raw.csv, the charts
and the README's headline show.
"""
