#!/usr/bin/env bats
# The core promise: an unmodified client resumes every connection after the
# first, judged by the server's log, for each way a handshake can start.

load helpers

# expect_resumption VERSION CLIENT-OPTIONS: 10 connections without the shim (none
# resumed) and 10 with it (all but the first resumed), as the server saw.
expect_resumption() {
    start_psk "$1"
    shift
    run client --n 10 "$@" "$PORT"
    assert_success
    assert_equal "$(connections)" 10
    assert_equal "$(resumed)" 0
    : > "$SLOG"
    run with_shim "$CLIENT" --n 10 "$@" "$PORT"
    assert_success
    assert_equal "$(connections)" 10
    assert_equal "$(resumed)" 9
}

# Both protocol versions, one after the other.
both_versions() {
    expect_resumption --tls13 "$@"
    teardown
    expect_resumption --tls12 "$@"
}

@test "TLS 1.3, SSL_connect: 0 of 10 resumed without the shim, 9 of 10 with it" {
    expect_resumption --tls13 --mode connect
}

@test "TLS 1.2, SSL_connect: 0 of 10 without, 9 of 10 with" {
    expect_resumption --tls12 --mode connect
}

@test "TLS 1.3 and 1.2, SSL_do_handshake" {
    both_versions --mode handshake
}

@test "TLS 1.3 and 1.2, handshake inside the first SSL_write" {
    both_versions --mode write
}

@test "TLS 1.3 and 1.2, BIO_f_ssl with BIO_do_handshake" {
    both_versions --mode bio
}

@test "a fresh SSL_CTX for every connection, verifying the server" {
    both_versions --fresh-ctx --cafile "$CA" --verify-host localhost
}

@test "version not pinned: the server picks TLS 1.3 and it resumes" {
    start_psk
    run with_shim "$CLIENT" --n 10 "$PORT"
    assert_success
    assert_equal "$(resumed)" 9
    run grep -c 'version=TLSv1.3' "$SLOG"
    assert_output 10
}

@test "connections freed without SSL_shutdown do not stop later ones resuming" {
    both_versions --no-shutdown
}

@test "8 threads x 10 connections: all but the first burst resume, no ticket offered twice" {
    start_psk --tls13
    run with_shim "$CLIENT" --threads 8 --n 10 "$PORT"
    assert_success
    assert_equal "$(connections)" 80
    [ "$(resumed)" -ge 72 ]
    assert_equal "$(offered_twice)" ""
}

@test "a burst of 8 after one warm-up connection: the pool gives each a distinct ticket" {
    start_psk --tls13 --tickets 8
    run with_shim "$CLIENT" --warmup 1 --threads 8 --n 1 "$PORT"
    assert_success
    assert_equal "$(resumed)" 8
    assert_equal "$(offered_twice)" ""
}

@test "a second burst of 16 finds the tickets the first brought back: all 16 resume" {
    # Through a relay holding data 10 ms each way, so that the 16
    # connections of each burst are open at once: the first starts from the
    # warm-up's 2 tickets and 14 find none, which shows the pool more
    # handshakes at once than its 8; their tickets are kept for the second.
    start_psk --tls13
    local d rport i
    d=$(mktemp -d "$BATS_TEST_TMPDIR/relay.XXXX")
    "$BATS_TEST_DIRNAME/bin/delayrelay" --to "$PORT" --delay 10 --port-file "$d/port" 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    for i in $(seq 100); do
        [ -s "$d/port" ] && break
        sleep 0.05
    done
    rport=$(cat "$d/port")
    run with_shim "$CLIENT" --warmup 1 --warm-burst --threads 16 --n 1 "$rport"
    assert_success
    assert_equal "$(connections)" 33
    assert_equal "$(grep '^conn=' "$SLOG" | tail -n 16 | grep -c 'resumed=1')" 16
    assert_equal "$(offered_twice)" ""
}

@test "TLS 1.2 under 8 threads: every connection after the first burst resumes" {
    start_psk --tls12
    run with_shim "$CLIENT" --threads 8 --n 10 "$PORT"
    assert_success
    [ "$(resumed)" -ge 72 ]
}

@test "fork: parent and child both resume and never offer the same ticket" {
    start_psk --tls13 --tickets 4
    run with_shim "$CLIENT" --warmup 2 --fork --threads 2 --n 5 "$PORT"
    assert_success
    assert_equal "$(connections)" 22
    assert_equal "$(offered_twice)" ""
    # The child starts with no tickets, so it pays one full handshake per
    # thread at most; everything else resumes.
    [ "$(resumed)" -ge 17 ]
}

@test "an application with its own session cache behaves as without the shim" {
    start_psk --tls13
    run client --native --n 10 "$PORT"
    assert_success
    local without_offers without_resumed
    without_resumed=$(resumed) without_offers=$(offers)
    : > "$SLOG"
    run with_shim "$CLIENT" --native --n 10 "$PORT"
    assert_success
    assert_equal "$(resumed)" "$without_resumed"
    assert_equal "$(offered_twice)" ""
    [ "$without_resumed" -eq 9 ]
}

@test "an application's own new-session callback sees every session, as without the shim" {
    # An OpenSSL server sends 2 tickets after a full handshake and 1 after a
    # resumption: the callback must see each of them, shim or not.
    start_psk --tls13
    run client --app-cb --n 5 "$PORT"
    assert_success
    assert_output --regexp "callback_sessions=10\$"
    : > "$SLOG"
    run with_shim "$CLIENT" --app-cb --n 5 "$PORT"
    assert_success
    assert_equal "$(resumed)" 4
    assert_output --regexp "callback_sessions=$((2 * (5 - 4) + 4))\$"
}

@test "a generic TLS_method context: same cache mode seen, OpenSSL's internal cache stays empty" {
    start_psk --tls13
    run client --generic --n 20 "$PORT"
    assert_success
    assert_output "reused=0 of=20 failed=0 mode=$(printf '%d' 2) cached=0"
    run with_shim "$CLIENT" --generic --n 20 "$PORT"
    assert_success
    assert_output "reused=19 of=20 failed=0 mode=2 cached=0"
}

@test "a server that issues no tickets: every connection succeeds, fully" {
    start_psk --no-resume
    run with_shim "$CLIENT" --n 10 "$PORT"
    assert_success
    assert_output --partial 'failed=0'
    assert_equal "$(connections)" 10
    assert_equal "$(resumed)" 0
    start_psk --no-resume --tls12
    run with_shim "$CLIENT" --n 10 --tls12 "$PORT"
    assert_success
    assert_equal "$(resumed)" 0
}

@test "a server that refuses every ticket: every connection succeeds, fully; offers pause" {
    start_psk --refuse --tls13
    run with_shim "$CLIENT" --n 40 "$PORT"
    assert_success
    assert_output "reused=0 of=40 failed=0"
    assert_equal "$(resumed)" 0
    # The shim did offer (so the refusal was exercised), each ticket once,
    # and after three refusals in a row it offers ever more rarely: on
    # connections 2, 3, 4, 7, 12, 21 and 38.
    assert_equal "$(offers)" 7
    assert_equal "$(offered_twice)" ""
    start_psk --refuse --tls12
    run with_shim "$CLIENT" --n 10 --tls12 "$PORT"
    assert_success
    assert_equal "$(resumed)" 0
}

@test "nginx: the C client resumes 9 of 10 (TLS 1.3 and 1.2), 0 without the shim" {
    start_nginx
    run client --n 10 "$PORT"
    assert_success
    assert_equal "$(nginx_resumed)" 0
    : > "$SLOG"
    run with_shim "$CLIENT" --n 10 "$PORT"
    assert_success
    assert_equal "$(nginx_requests)" 10
    assert_equal "$(nginx_resumed)" 9
    : > "$SLOG"
    run with_shim "$CLIENT" --n 10 --tls12 "$PORT"
    assert_success
    assert_equal "$(nginx_resumed)" 9
}

@test "Python urllib.request.urlopen in a loop, unmodified: resumed with the shim" {
    start_nginx
    cat > "$BATS_TEST_TMPDIR/fetch.py" <<'PY'
import ssl, sys, urllib.request
url, ca, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(n):
    ctx = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(url, context=ctx) as r:
        assert r.read() == b"ok\n"
print("done")
PY
    run timeout 60 "$PY" "$BATS_TEST_TMPDIR/fetch.py" "https://localhost:$PORT/" "$CA" 10
    assert_success
    assert_equal "$(nginx_resumed)" 0
    : > "$SLOG"
    run with_shim "$PY" "$BATS_TEST_TMPDIR/fetch.py" "https://localhost:$PORT/" "$CA" 10
    assert_success
    assert_output done
    assert_equal "$(nginx_requests)" 10
    assert_equal "$(nginx_resumed)" 9
}

@test "wrk, which resumes by itself (SSL_clear), works as without the shim" {
    start_nginx
    run timeout 30 wrk -t1 -c1 -d2s -H "Connection: close" "https://127.0.0.1:$PORT/"
    assert_success
    local without_total without_resumed
    without_total=$(nginx_requests) without_resumed=$(nginx_resumed)
    : > "$SLOG"
    run with_shim wrk -t1 -c1 -d2s -H "Connection: close" "https://127.0.0.1:$PORT/"
    assert_success
    refute_output --partial "Socket errors"
    refute_output --partial "Non-2xx"
    local total resumed
    total=$(nginx_requests) resumed=$(nginx_resumed)
    echo "without: $without_resumed of $without_total resumed; with: $resumed of $total" >&3
    [ "$without_resumed" -eq $((without_total - 1)) ]
    [ "$resumed" -eq $((total - 1)) ]
    [ "$total" -gt 10 ]
}

@test "wrk, 4 connections reused with SSL_clear: no TLS 1.3 ticket offered twice" {
    start_psk --tls13
    run with_shim wrk -t2 -c4 -d2s "https://127.0.0.1:$PORT/"
    assert_success
    [ "$(connections)" -gt 10 ]
    # At most one full handshake per connection (those wrk cuts off at the
    # end of its run show as failed handshakes, and are not counted).
    [ "$(grep -c 'status=ok resumed=0' "$SLOG")" -le 4 ]
    assert_equal "$(offered_twice)" ""
}

@test "contexts in a library context of their own, the default one unable to compute: resumed 5 of 6" {
    start_psk
    run with_shim "$CLIENT" --libctx --n 6 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_output "reused=5 of=6 failed=0"
    assert_equal "$(resumed)" 5
}

@test "an application's own saved session, set on three later connections, resumes all three (TLS 1.3, and TLS 1.2 renewed)" {
    # --big-tickets: the server renews every TLS 1.2 ticket it accepts
    start_psk --big-tickets 10
    one_session_thrice
}

@test "connections shut down but never freed (Node.js 20, Ruby): their newest tickets serve the next ones, resumed 9 of 10" {
    # A resumed handshake earns one ticket, its connection's newest: held
    # on the connection until it is freed, every other one resumed.
    start_psk --tls13
    run with_shim "$CLIENT" --linger --n 10 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_output "reused=9 of=10 failed=0"
    assert_equal "$(resumed)" 9
    assert_equal "$(offered_twice)" ""
}

@test "a connection put back in connect state after SSL_shutdown (s_client -reconnect): its own reconnections resume, no ticket offered twice" {
    # --linger: each connection stays while the next one starts, with the
    # pool that its reconnections took their tickets from.
    start_psk --tls13
    run client --reconnect 2 --n 3 --linger --cafile "$CA" --sni localhost "$PORT"
    assert_output "reused=6 of=9 failed=0"
    : > "$SLOG"
    run with_shim "$CLIENT" --reconnect 2 --n 3 --linger --cafile "$CA" --sni localhost "$PORT"
    assert_success
    # every reconnection resumes, as without the shim, and the shim offers
    # the second connection a ticket the first earned
    [ "$(resumed)" -ge 7 ]
    assert_equal "$(offered_twice)" ""
}
