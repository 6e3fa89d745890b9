#!/usr/bin/env bats
# Each feature runs only on the library releases it was verified on
# (shim/core/verified.def). tests/bin/fakever.so, preloaded after the shim,
# makes a library name another release: under one the shim was not verified
# on, every feature of that library turns itself off, and the connections go
# as they would without the shim, judged by the servers' logs.

load helpers

FAKEVER="$ROOT/tests/bin/fakever.so"
GNUTLSCLIENT="$ROOT/tests/bin/gnutlsclient"

# as RELEASE-VARIABLE=VALUE COMMAND...: COMMAND under the shim, with a
# library's release made up (FAKE_OPENSSL_RELEASE, FAKE_GNUTLS_RELEASE).
as() { env "$1" RESUMESHIM_LOG=info LD_PRELOAD="$PRELOAD $FAKEVER" timeout 120 "${@:2}"; }

@test "an OpenSSL release not verified: no client resumption, and one line saying why" {
    start_psk --tls13
    run as FAKE_OPENSSL_RELEASE=3.4 "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_line "reused=0 of=5 failed=0"
    assert_line --partial "OpenSSL 3.4: client resumption is not verified on this release; off"
    assert_equal "$(resumed)" 0
    # the same run on this machine's release, which the shim was verified on
    verified OPENSSL_CLIENT
    : > "$SLOG"
    run with_shim "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(resumed)" 4
}

# wrap_server ENV...: the server of tests/servers/wrapserver.py (a new
# context per connection) under the shim's server mode; sets PORT and SLOG.
wrap_server() {
    local d
    d=$(mktemp -d "$BATS_TEST_TMPDIR/wrap.XXXX")
    SLOG="$d/log"
    env "$@" RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD $FAKEVER" "$PY" \
        "$ROOT/tests/servers/wrapserver.py" "$SLOG" "$d/port" "$CERT:$KEY" 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    local i
    for i in $(seq 200); do [ -s "$d/port" ] && break; sleep 0.05; done
    PORT=$(cat "$d/port")
}

@test "an OpenSSL release not verified: no server mode" {
    verified OPENSSL_SERVER
    wrap_server FAKE_OPENSSL_RELEASE=3.4
    run with_shim "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(grep -c 'resumed=0' "$SLOG")" 5
    wrap_server FAKE_OPENSSL_RELEASE=
    run with_shim "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(resumed)" 4
}

# fetch N: N requests from one Python process, a default context each,
# trusting the system's bundle and the test CA, with the store; the
# release made up as $1 says.
fetch() {
    RESUMESHIM_STORE="$STORE" as "$1" "$PY" "$ROOT/examples/fetch.py" \
        "https://localhost:$PORT/" "$BUNDLE" "$2"
}

@test "trust on demand: off on a release it was not verified on, while resumption goes on" {
    start_psk --tls13
    BUNDLE="$BATS_TEST_TMPDIR/bundle.pem" STORE="$BATS_TEST_TMPDIR/store"
    cat /etc/ssl/certs/ca-certificates.crt "$CA" > "$BUNDLE"
    # 3.5: client resumption verified, trust on demand not
    run fetch FAKE_OPENSSL_RELEASE=3.5 4
    assert_success
    assert_equal "$(resumed)" 3
    assert_line --partial "OpenSSL 3.5: trust on demand is not verified on this release; off"
    # no index of the file: nothing was ever taken on demand
    run ls "$STORE"
    refute_line --regexp '^t-'
    if verified OPENSSL_DEMAND; then
        # this machine's release: the third context on takes it on demand,
        # and the store keeps the file's index
        run fetch FAKE_OPENSSL_RELEASE= 4
        assert_success
        run ls "$STORE"
        assert_line --regexp '^t-[0-9a-f]{16}$'
    fi
}

@test "a GnuTLS release not verified: no resumption" {
    start_nginx
    run as FAKE_GNUTLS_RELEASE=3.6.0 "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" \
        --count 5
    assert_success
    assert_output --partial "GnuTLS 3.6: client resumption is not verified on this release; off"
    assert_equal "$(nginx_requests)" 5
    assert_equal "$(nginx_resumed)" 0
    verified GNUTLS_CLIENT
    : > "$SLOG"
    run as FAKE_GNUTLS_RELEASE= "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" --count 5
    assert_success
    assert_equal "$(nginx_resumed)" 4
}

@test "the manual lists every feature's verified releases as the shim has them" {
    local f lib releases what
    while IFS='|' read -r f lib releases what; do
        run grep -F "$what: $lib $releases" "$ROOT/scripts/libresumeshim.7"
        assert_success
    done < <(sed -n 's/^VERIFIED(\([A-Z_]*\), "\([^"]*\)", "\([^"]*\)", "\([^"]*\)")$/\1|\2|\3|\4/p' \
             "$ROOT/shim/core/verified.def")
}
