#!/usr/bin/env bats
# Each RESUMESHIM_* variable changes what the server sees; bad values get
# one warning naming the variable, and the program still runs.

load helpers
bats_require_minimum_version 1.5.0

@test "RESUMESHIM_POOL_SIZE bounds how many of a burst resume" {
    # One warm-up connection collects 8 tickets; the burst never reads, so
    # it earns none back and only the pool's tickets can resume.
    start_psk --tls13 --tickets 8
    run with_shim "$CLIENT" --warmup 1 --no-read --threads 8 --n 1 "$PORT"
    assert_success
    assert_equal "$(resumed)" 8
    : > "$SLOG"
    RESUMESHIM_POOL_SIZE=2 run with_shim "$CLIENT" --warmup 1 --no-read --threads 8 --n 1 "$PORT"
    assert_success
    assert_equal "$(resumed)" 2
    assert_equal "$(offered_twice)" ""
}

@test "RESUMESHIM_MAX_AGE: a session older than the limit is not offered" {
    start_psk --tls13
    RESUMESHIM_MAX_AGE=1 run with_shim "$CLIENT" --n 3 --pause 1300 "$PORT"
    assert_success
    assert_equal "$(resumed)" 0
    assert_equal "$(offers)" 0
    : > "$SLOG"
    RESUMESHIM_MAX_AGE=60 run with_shim "$CLIENT" --n 3 --pause 1300 "$PORT"
    assert_success
    assert_equal "$(resumed)" 2
}

@test "RESUMESHIM_MAX_AGE counts from the full handshake, through a chain of resumptions" {
    start_psk --tls13
    # Every 2 s: the first connection is full, the next two resume; the
    # fourth, 6 s after the full handshake, is not offered a ticket although
    # the tickets in hand were issued by a resumed connection 2 s before.
    # It verifies afresh, so the fifth resumes again. Start on a second's
    # edge, since ages are whole seconds.
    sleep "0.$(printf '%09d' $((1000000000 - 10#$(date +%N))))"
    RESUMESHIM_MAX_AGE=6 run with_shim "$CLIENT" --n 5 --pause 2000 "$PORT"
    assert_success
    run sed -n 's/.*resumed=\([01]\).*/\1/p' "$SLOG"
    assert_equal "$(echo $output | tr -d ' ')" "01101"
}

@test "RESUMESHIM_MAX_HOSTS: the least recently used server is forgotten" {
    start_psk --tls13
    # a, b, a (resumes, and is now the most recent), c (evicts b, not a), a.
    RESUMESHIM_MAX_HOSTS=2 run with_shim "$CLIENT" --snis a.test,b.test,a.test,c.test,a.test \
        --n 5 "$PORT"
    assert_success
    run sed -n 's/.*resumed=\([01]\).*/\1/p' "$SLOG"
    assert_equal "$(echo $output | tr -d ' ')" "00101"
    : > "$SLOG"
    RESUMESHIM_MAX_HOSTS=1 run with_shim "$CLIENT" --snis a.test,b.test --n 6 "$PORT"
    assert_success
    assert_equal "$(resumed)" 0
}

@test "RESUMESHIM_DISABLE=1: nothing is offered" {
    start_psk --tls13
    RESUMESHIM_DISABLE=1 run with_shim "$CLIENT" --n 5 "$PORT"
    assert_success
    assert_equal "$(resumed)" 0
    assert_equal "$(offers)" 0
}

@test "RESUMESHIM_STATS=1 prints one summary line on stderr; stdout is untouched" {
    start_psk --tls13
    RESUMESHIM_STATS=1 LD_PRELOAD="$PRELOAD" "$CLIENT" --n 5 "$PORT" \
        > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/out")" "reused=4 of=5 failed=0"
    run cat "$BATS_TEST_TMPDIR/err"
    assert_output --regexp '^resumeshim\[[0-9]+\]: handshakes=5 offered=4 resumed=4 full=1 tickets=[0-9]+ evicted=[0-9]+ expired=0$'
    LD_PRELOAD="$PRELOAD" "$CLIENT" --n 2 "$PORT" > /dev/null 2> "$BATS_TEST_TMPDIR/err"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" ""
}

@test "RESUMESHIM_LOG=debug to RESUMESHIM_LOG_FILE, nothing on stderr" {
    start_psk --tls13
    RESUMESHIM_LOG=debug RESUMESHIM_LOG_FILE="$BATS_TEST_TMPDIR/shim.log" \
        LD_PRELOAD="$PRELOAD" "$CLIENT" --n 3 "$PORT" > /dev/null 2> "$BATS_TEST_TMPDIR/err"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" ""
    run grep -c 'offered a TLS 1.3 session' "$BATS_TEST_TMPDIR/shim.log"
    assert_output 2
}

@test "RESUMESHIM_LOG_FILE: a symbolic link, a FIFO or a directory is refused with one warning; the log goes to stderr" {
    start_psk --tls13
    local d="$BATS_TEST_TMPDIR" f
    printf 'precious\n' > "$d/target"
    ln -s "$d/target" "$d/link"
    mkfifo "$d/fifo" "$d/read-fifo"
    mkdir "$d/dir"
    # the FIFO with no reader hung the program in open(); read-fifo has one
    exec 4<> "$d/read-fifo"
    for f in link fifo read-fifo dir; do
        : > "$SLOG"
        run --separate-stderr timeout 20 env RESUMESHIM_LOG=debug RESUMESHIM_LOG_FILE="$d/$f" \
            LD_PRELOAD="$PRELOAD" "$CLIENT" --n 3 "$PORT"
        assert_success
        assert_output "reused=2 of=3 failed=0"
        assert_equal "$(grep -c 'RESUMESHIM_LOG_FILE' <<< "$stderr")" 1
        [[ "$stderr" == *"RESUMESHIM_LOG_FILE='$d/$f' is refused"*"; logging to stderr"* ]]
        assert_equal "$(grep -c 'offered a TLS 1.3 session' <<< "$stderr")" 2
        assert_equal "$(resumed)" 2
    done
    assert_equal "$(cat "$d/target")" precious
    # nothing reached the FIFO's reader
    run read -r -t 0 -u 4
    assert_failure
    exec 4<&-
}

@test "bad values: one warning each, naming the variable and the value used; still resumes" {
    start_psk --tls13
    local var
    for var in RESUMESHIM_POOL_SIZE=abc RESUMESHIM_POOL_SIZE=0 RESUMESHIM_POOL_SIZE=8x \
               RESUMESHIM_MAX_AGE=-5 RESUMESHIM_MAX_AGE=99999999999999999999 \
               RESUMESHIM_MAX_HOSTS= RESUMESHIM_MAX_HOSTS=1e3 RESUMESHIM_STATS=yes \
               RESUMESHIM_LOG=loud RESUMESHIM_SERVER=yes RESUMESHIM_TICKET_KEY_ROTATE=0; do
        : > "$SLOG"
        env "$var" LD_PRELOAD="$PRELOAD" "$CLIENT" --n 3 "$PORT" > "$BATS_TEST_TMPDIR/out" \
            2> "$BATS_TEST_TMPDIR/err"
        assert_equal "$(cat "$BATS_TEST_TMPDIR/out")" "reused=2 of=3 failed=0"
        run cat "$BATS_TEST_TMPDIR/err"
        assert_equal "${#lines[@]}" 1
        assert_output --regexp "^resumeshim\[[0-9]+\]: warning: ${var%%=*}='${var#*=}' .*; using "
        assert_equal "$(resumed)" 2
    done
}

@test "a bad RESUMESHIM_DISABLE value warns and disables, the safe reading" {
    start_psk --tls13
    RESUMESHIM_DISABLE=yes run with_shim "$CLIENT" --n 3 "$PORT"
    assert_success
    assert_output --partial "RESUMESHIM_DISABLE='yes' is neither 0 nor 1; using 1"
    assert_equal "$(resumed)" 0
}
