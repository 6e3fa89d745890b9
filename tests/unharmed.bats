#!/usr/bin/env bats
# Programs the shim does not serve run exactly as without it.

load helpers

same_without_and_with() {
    local d="$BATS_TEST_TMPDIR"
    local rc0=0 rc1=0
    "$@" > "$d/out0" 2> "$d/err0" || rc0=$?
    LD_PRELOAD="$PRELOAD" "$@" > "$d/out1" 2> "$d/err1" || rc1=$?
    assert_equal "$rc1" "$rc0"
    run diff "$d/out0" "$d/out1"
    assert_success
    run diff "$d/err0" "$d/err1"
    assert_success
}

@test "ls: same output and exit code, nothing on stderr" {
    same_without_and_with ls -la "$ROOT"
    same_without_and_with ls /nonexistent
    RESUMESHIM_STATS=1 RESUMESHIM_POOL_SIZE=bad LD_PRELOAD="$PRELOAD" ls / > /dev/null \
        2> "$BATS_TEST_TMPDIR/err"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" ""
}

@test "bash -c true and false: same exit codes, nothing on stderr" {
    same_without_and_with bash -c true
    same_without_and_with bash -c 'echo hi; exit 3'
}

@test "wget (GnuTLS, out of the shim's reach) fetches as without it" {
    start_psk
    same_without_and_with wget -q -O - --ca-certificate="$CA" "https://localhost:$PORT/"
    run cat "$BATS_TEST_TMPDIR/out1"
    assert_output ok
}

@test "only the hooks are exported, under OPENSSL_3.0.0" {
    run sh -c "nm -D --defined-only '$SHIM' | awk '{print \$3}' | sort"
    expected=$(sed -n 's/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/\1@@OPENSSL_3.0.0/p' \
        "$ROOT/include/hooks.def" | sort; echo OPENSSL_3.0.0)
    assert_equal "$output" "$(echo "$expected" | sort)"
    # and the shim does not pull libssl into programs that do not use it
    run sh -c "readelf -d '$SHIM' | grep NEEDED"
    refute_output --partial libssl
    refute_output --partial libcrypto
}
