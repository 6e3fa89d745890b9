#!/usr/bin/env bats
# A server cannot make the shim keep more than it bounds, and odd servers
# cost only full handshakes.

load helpers

@test "10 tickets per connection: the pool stays at its size, memory stays flat" {
    # Under make test-asan, freed memory would sit in ASan's quarantine.
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
    start_psk --tls13 --tickets 10
    run with_shim "$CLIENT" --n 500 --quiet --rss "$PORT"
    assert_success
    local small=${output##*rss_kib=}
    : > "$SLOG"
    run with_shim "$CLIENT" --n 10000 --quiet --rss "$PORT"
    assert_success
    local large=${output##*rss_kib=}
    assert_equal "$(resumed)" 9999
    assert_equal "$(offered_twice)" ""
    echo "peak RSS: $small KiB after 500 connections, $large KiB after 10000" >&3
    # An unbounded pool would hold ~95,000 sessions here: tens of megabytes.
    [ $((large - small)) -lt 8192 ]
}

@test "tickets over 8 KiB are not kept; every connection succeeds" {
    # The server seals N bytes into each ticket, which adds its own few
    # hundred bytes of session: 7,600 stays under 8 KiB, 8,400 goes over.
    local size expect
    for size in 60000:0 8400:0 7600:4; do
        start_psk --tls13 --big-tickets "${size%:*}"
        run with_shim "$CLIENT" --n 5 "$PORT"
        assert_success
        assert_equal "$(connections)" 5
        assert_equal "$(resumed)" "${size#*:}"
    done
}

@test "a 30-day ticket lifetime: no session outlives 7 days" {
    make_certs "$BATS_TEST_TMPDIR" 30
    CERT="$BATS_TEST_TMPDIR/server.pem" KEY="$BATS_TEST_TMPDIR/server.key"
    start_psk --tls13 --lifetime 2592000
    local faketime=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
    # The client's clock jumps 8 days forward 3 s after it starts: between
    # its second connection (at about 1.5 s) and its third (at about 3.6 s).
    # The plain build: libfaketime hangs beside libasan, shim or not.
    RESUMESHIM_MAX_AGE=604800 run timeout 60 env LD_PRELOAD="$SHIM $faketime" \
        FAKETIME=+8d FAKETIME_START_AFTER_SECONDS=3 "$CLIENT" --n 3 --pause 1800 "$PORT"
    assert_success
    run sed -n 's/.*resumed=\([01]\).*/\1/p' "$SLOG"
    assert_equal "$(echo $output | tr -d ' ')" "010"
}

# valgrind runs the plain build (it cannot run beside AddressSanitizer).
valgrind_shim() {
    # shellcheck disable=SC2046
    LD_PRELOAD="$SHIM" timeout 300 valgrind -q --error-exitcode=9 $(vg_supp) "$@"
}

@test "threads handshaking at once run clean under helgrind and valgrind's memcheck" {
    start_psk --tls13
    run valgrind_shim --tool=helgrind "$CLIENT" --threads 4 --n 10 "$PORT"
    assert_success
    assert_output "reused=$(resumed) of=40 failed=0"
    start_psk --tls12
    run valgrind_shim --tool=helgrind "$CLIENT" --tls12 --threads 4 --n 10 "$PORT"
    assert_success
    start_psk
    run valgrind_shim --leak-check=full --errors-for-leak-kinds=definite "$CLIENT" --threads 2 --n 10 --fresh-ctx --cafile "$CA" "$PORT"
    assert_success
    assert_output --partial "of=20 failed=0"
    [ "$(resumed)" -ge 18 ]
}

@test "no memory for a hash table the shim makes: no program ends or hangs, every connection a full handshake (OpenSSL and GnuTLS)" {
    # uthash's default on a failed allocation is exit(-1), here under the
    # pools' lock: the exit handler's flush then waited for it for good.
    # The plain build: the failing allocator cannot stand before libasan.
    local nomem="$ROOT/tests/bin/nomemhash.so" v
    for v in --tls13 --tls12; do
        start_psk "$v"
        run timeout 60 env LD_PRELOAD="$nomem $SHIM" "$CLIENT" --n 4 "$PORT"
        assert_success
        assert_output "reused=0 of=4 failed=0"
        assert_equal "$(grep -c 'status=ok' "$SLOG")" 4
        assert_equal "$(resumed)" 0
    done
    start_nginx
    for v in 1.3 1.2; do
        : > "$SLOG"
        run timeout 60 env LD_PRELOAD="$nomem $SHIM" "$ROOT/tests/bin/gnutlsclient" \
            --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --count 4
        assert_success
        assert_equal "$(grep -c ' verify=ok$' <<< "$output")" 4
        assert_equal "$(nginx_requests)" 4
        assert_equal "$(nginx_resumed)" 0
    done
}
