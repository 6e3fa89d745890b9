"""Runs the groups of cases asked for, against servers started for them,
then writes the report; stops the servers and removes its files however
it ends."""
import os
import shutil
import sys
import time

from .cases.client import burst_cases, c_client_cases, yardstick_cases
from .cases.command import command_cases
from .cases.costs import cost_cases
from .cases.gnutls import gnutls_cases
from .cases.instructions import instruction_cases
from .cases.latency import latency_cases
from .cases.memory import memory_cases
from .cases.programs import oneshot_cases, program_cases
from .cases.servers import server_cases
from .config import ONLY, OUT, ROOT
from .headline import update_readme
from .report import report
from .runners import PROCS, RUNS, STORES, WORK
from .servers import make_bundle, make_chain, start_nginx, start_nginx_pages, start_psk


def wanted(group):
    return ONLY is None or group in ONLY


def main():
    os.makedirs(OUT, exist_ok=True)
    start = time.monotonic()
    try:
        ec = make_chain(os.path.join(WORK, "ecdsa"), "ecdsa")
        rsa = make_chain(os.path.join(WORK, "rsa"), "rsa")
        servers = {"ecdsa": (start_nginx("nginx-ecdsa", ec[1], ec[2]), ec[0]),
                   "rsa": (start_nginx("nginx-rsa", rsa[1], rsa[2]), rsa[0])}
        miss = start_nginx("nginx-miss", ec[1], ec[2],
                           "ssl_session_tickets off; ssl_session_cache off;")
        if wanted("client"):
            c_client_cases(servers)
        if wanted("burst"):
            burst_cases(servers)
        if wanted("yardstick"):
            yardstick_cases(servers)
        nothing = start_psk("psk-miss", ec[1], ec[2], "--no-resume")
        bundle = make_bundle(ec[0])
        if wanted("programs"):
            program_cases(servers["ecdsa"][0], nothing, ec[0], bundle)
            oneshot_cases(start_nginx_pages(ec[1], ec[2]), ec[0], bundle)
        if wanted("gnutls"):
            gnutls_cases(servers["ecdsa"][0], ec[0])
        if wanted("latency"):
            latency_cases(servers["ecdsa"][0], ec[0])
        if wanted("costs"):
            cost_cases(servers["ecdsa"][0], miss, nothing, ec[0])
        if wanted("memory"):
            memory_cases(ec[1], ec[2], ec[0])
        if wanted("instructions"):
            instruction_cases(servers["ecdsa"][0], miss, nothing, ec[0], bundle)
        if wanted("servers"):
            server_cases({"ecdsa": ec, "rsa": rsa})
        if wanted("command"):
            command_cases(servers["ecdsa"][0], ec[0])
        report(time.monotonic() - start)
        if not ONLY and os.path.realpath(OUT) == os.path.join(ROOT, "examples/bench"):
            update_readme()
    finally:
        for pid in PROCS:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        shutil.rmtree(WORK, ignore_errors=True)
        for d in STORES:
            shutil.rmtree(d, ignore_errors=True)
    print(f"bench: {len(RUNS)} runs in {time.monotonic() - start:.0f} s; results in {OUT}",
          file=sys.stderr)
