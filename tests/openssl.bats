#!/usr/bin/env bats
# OpenSSL's own TLS test recipes as the peer suite: built from Debian's
# source (scripts/build-openssl-tests, about 5 minutes the first time) and
# run against the libssl built there, without the shim, under its client
# side and under the server mode. Without the shim everything passes; under
# it, what differs must be exactly tests/openssl-differences.txt, each line
# with its reason. Tests run in their fixed order (OPENSSL_TEST_RAND_ORDER,
# set to anything, shuffles them): the shim's pool carries state from one
# test to the next.

load helpers

RECIPES="test_sslapi test_sslbuffers test_servername test_ssl_new test_dtls test_asyncio
         test_tls13ccs test_sslcorrupt test_recordlen test_fatalerr test_clienthello
         test_ssl_ctx test_cipherlist"

setup_file() {
    local tree mode envs
    tree=$("$ROOT/scripts/build-openssl-tests" 2> "$BATS_FILE_TMPDIR/build.log") || return 1
    for mode in none client server; do
        envs=()
        [ "$mode" = none ] || envs+=(LD_PRELOAD="$PRELOAD")
        [ "$mode" = server ] && envs+=(RESUMESHIM_SERVER=1)
        # shellcheck disable=SC2086
        (cd "$tree" && env -u OPENSSL_TEST_RAND_ORDER "${envs[@]}" HARNESS_VERBOSE=yes SRCTOP=. \
            BLDTOP=. PERL=perl EXE_EXT= timeout 900 perl test/run_tests.pl $RECIPES \
            > "$BATS_FILE_TMPDIR/$mode.log" 2>&1) 3>&- || true
    done
}

# The tests that failed in a run, "RECIPE: TEST", one a line (a test
# program's iterations and the recipes' "running" lines are left out).
failed() {
    awk '/^[0-9][0-9]-test_.*\.t \.+ *$/ { r = $1 }
         /^ *not ok [0-9]+ - / { sub(/^ *not ok [0-9]+ - /, "")
             if ($0 !~ /^iteration [0-9]+$/ && $0 !~ /^running /) print r ": " $0 }' \
        "$BATS_FILE_TMPDIR/$1.log" | sort -u
}

# (a mode may name the OpenSSL release it holds for: client@3.0)
allowed() {
    local release
    release=$(openssl version | cut -d' ' -f2 | cut -d. -f1,2)
    grep -v '^#' "$ROOT/tests/openssl-differences.txt" |
        awk -F'|' -v m="$1" -v r="$1@$release" '{ n = split($1, ms, ",")
            for (i = 1; i <= n; i++) if (ms[i] == m || ms[i] == r) print $2 }' |
        sort -u
}

# Subtests passed and failed, for the record (a TAP comment).
counts() {
    echo "# $1: $(grep -cE '^ *ok [0-9]+ - ' "$BATS_FILE_TMPDIR/$1.log") subtests passed," \
        "$(grep -cE '^ *not ok [0-9]+ - ' "$BATS_FILE_TMPDIR/$1.log") failed" >&3
}

@test "OpenSSL's TLS recipes pass without the shim" {
    counts none
    assert_equal "$(tail -1 "$BATS_FILE_TMPDIR/none.log")" "Result: PASS"
    assert_equal "$(failed none)" ""
    [ "$(grep -cE '^ *ok [0-9]+ - ' "$BATS_FILE_TMPDIR/none.log")" -gt 3000 ]
}

@test "OpenSSL's TLS recipes under the shim: only the listed differences" {
    counts client
    assert_equal "$(failed client)" "$(allowed client)"
}

@test "OpenSSL's TLS recipes under the server mode: only the listed differences" {
    counts server
    assert_equal "$(failed server)" "$(allowed server)"
}
