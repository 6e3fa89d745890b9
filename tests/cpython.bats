#!/usr/bin/env bats
# CPython's own TLS test suites, the most thorough tests of OpenSSL's
# semantics on this machine, with Debian's python3 (the libpython3.X-testsuite
# of the installed python3):
# under the shim they must pass, running and skipping exactly the tests
# that a run without it runs and skips. The four runs share the machine at
# once (they mostly wait on sockets and timers), in setup_file.

load helpers

SUITES="test_ssl test_httplib test_asyncio.test_ssl test_asyncio.test_sslproto"

setup_file() {
    local mode envs
    for mode in none client server store; do
        envs=(RESUMESHIM_STATS=1 RESUMESHIM_LOG_FILE="$BATS_FILE_TMPDIR/$mode.shim")
        case $mode in
        none) envs=() ;;
        client) envs+=(LD_PRELOAD="$PRELOAD") ;;
        server) envs+=(LD_PRELOAD="$PRELOAD" RESUMESHIM_SERVER=1) ;;
        store) envs+=(LD_PRELOAD="$PRELOAD" RESUMESHIM_SERVER=1
                      RESUMESHIM_STORE="$BATS_FILE_TMPDIR/store") ;;
        esac
        # shellcheck disable=SC2086
        (cd "$BATS_FILE_TMPDIR" && env "${envs[@]}" timeout 900 "$PY" -m test -v $SUITES \
            > "$BATS_FILE_TMPDIR/$mode.log" 2>&1; echo $? > "$BATS_FILE_TMPDIR/$mode.rc") 3>&- &
    done
    wait
}

# What a run ran and skipped, suite by suite, and its verdict (its last
# line: "Tests result: X" up to 3.12, "Result: X" from 3.13 on).
summary() {
    sed -n -e 's/^\(Ran [0-9]* tests\) in .*/\1/p' -e '/^OK/p' -e '/^FAILED/p' \
        -e 's/^\(Tests \)\{0,1\}[Rr]esult: /Result: /p' "$BATS_FILE_TMPDIR/$1.log"
}

# The shim's own summary lines, added up: proof that it was there.
shim_total() {
    sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$BATS_FILE_TMPDIR/$1.shim" | awk '{ n += $1 } END { print n + 0 }'
}

check_mode() {
    run summary "$1"
    assert_line "Result: SUCCESS"
    refute_line --partial FAILED
    assert_equal "$output" "$(summary none)"
    assert_equal "$(cat "$BATS_FILE_TMPDIR/$1.rc")" 0
}

@test "CPython's TLS suites pass without the shim" {
    run summary none
    assert_line "Result: SUCCESS"
    assert_equal "$(grep -c '^Ran ' <<< "$output")" 4
    assert_equal "$(cat "$BATS_FILE_TMPDIR/none.rc")" 0
}

@test "CPython's TLS suites under the shim: the same tests run and skipped, all pass" {
    check_mode client
    [ "$(shim_total client resumed)" -gt 0 ]
}

@test "CPython's TLS suites under the server mode: the same tests run and skipped, all pass" {
    check_mode server
    [ "$(shim_total server server_accepted)" -gt 0 ]
}

@test "CPython's TLS suites under the server mode with a store: the same, all pass" {
    check_mode store
    [ "$(shim_total store server_accepted)" -gt 0 ]
    [ -s "$BATS_FILE_TMPDIR/store/ticket-keys" ]
}
