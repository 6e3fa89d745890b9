"""The parts of scripts/bench: config (the command line, paths and sizes),
servers (the test chains and the servers measured against) and runners
(one run of a program: timing, CPU, peak RSS, the server's log; callgrind)."""
