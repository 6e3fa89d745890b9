"""The parts of scripts/bench: config (the command line, paths and sizes),
servers (the test chains and the servers measured against), runners (one
run of a program: timing, CPU, peak RSS, the server's log; callgrind) and
cases/, what each group of cases measures, a module a group."""
