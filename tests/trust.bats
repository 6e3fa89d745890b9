#!/usr/bin/env bats
# Resumption must never widen trust. A resumed handshake skips certificate
# verification, so a session may only go to a connection that would have
# judged the server as the one that earned it did. Each test here fails if
# its rule is broken, judged by the identities the server saw offered.

load helpers

# Identities offered by connection K (1-based), or "-".
offered_by() { sed -n "s/^conn=$1 .*offered=//p" "$SLOG"; }

# alternate PROFILE-A -- PROFILE-B [common options]: 6 connections
# alternating between two client configurations in one process. The second
# connection (B) must not be offered the ticket the first (A) earned, and
# each configuration still resumes on its own.
alternate() {
    local a=() b=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do b+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    run with_shim "$CLIENT" --n 6 "$@" "${a[@]}" --alt "${b[@]}" "$PORT"
    assert_success
    assert_equal "$(offered_by 2)" "-"
    assert_equal "$(resumed)" 4
    assert_equal "$(offered_twice)" ""
}

setup() {
    # A second CA in a bundle with the first: verification still passes,
    # but the trust store differs.
    if [ ! -f "$BATS_FILE_TMPDIR/bundle.pem" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj /CN=other-ca -keyout "$BATS_FILE_TMPDIR/other.key" \
            -out "$BATS_FILE_TMPDIR/other.pem" 2>/dev/null
        cat "$CA" "$BATS_FILE_TMPDIR/other.pem" > "$BATS_FILE_TMPDIR/bundle.pem"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj /CN=client -keyout "$BATS_FILE_TMPDIR/client.pem" \
            -out "$BATS_FILE_TMPDIR/client.crt" 2>/dev/null
        cat "$BATS_FILE_TMPDIR/client.crt" >> "$BATS_FILE_TMPDIR/client.pem"
    fi
    BUNDLE="$BATS_FILE_TMPDIR/bundle.pem" CLIENT_PEM="$BATS_FILE_TMPDIR/client.pem"
}

@test "control: two equal configurations built separately share sessions" {
    start_psk --tls13
    run with_shim "$CLIENT" --n 6 --cafile "$CA" --alt --cafile "$CA" "$PORT"
    assert_success
    [ "$(offered_by 2)" != "-" ]
    assert_equal "$(resumed)" 5
}

@test "a session earned with verification off is never offered to one that verifies" {
    start_psk --tls13
    alternate -- --cafile "$CA" --verify-host localhost
    start_psk --tls12
    alternate -- --cafile "$CA" --verify-host localhost -- --tls12
}

@test "a session earned checking no address is never offered to one that checks one (SSL_set1_host of an address: the first address set in the process)" {
    # The key asks verify parameters for an address only once the process
    # has set one; libssl's SSL_set1_host sets it through the PLT.
    start_psk --tls13
    alternate --cafile "$CA" -- --cafile "$CA" --verify-host 127.0.0.1
    start_psk --tls12
    alternate --cafile "$CA" -- --cafile "$CA" --verify-host 127.0.0.1 -- --tls12
}

@test "not offered after the CA file changed" {
    start_psk --tls13
    alternate --cafile "$CA" -- --cafile "$BUNDLE"
}

@test "not offered after the expected host name changed (SSL_set1_host)" {
    start_psk --tls13
    alternate --cafile "$CA" --verify-host localhost -- --cafile "$CA" --verify-host test.example
}

# judged_again CALLBACK-OPTION [common options]: the application's own
# callback is asked about the session's server again at the end of every
# resumed handshake, as in a full one. Two configurations with the same
# callback (the key cannot tell them apart), one pinning the server's
# certificate, the other pinning another: the second's connections fail as
# without the shim, though offered the first's sessions, and send nothing.
# Then two that both pin the server's certificate share sessions.
judged_again() {
    local cb="$1"
    shift
    local v=()
    [ "${1:-}" = --tls12 ] && v=(--tls12)
    local two=(--n 6 "${v[@]}" --cafile "$CA" "$cb" --pin "$CERT"
               --alt --cafile "$CA" "$cb" --pin "$BATS_FILE_TMPDIR/other.pem")
    start_psk "$@"
    run client "${two[@]}" "$PORT"
    assert_failure
    local native=${lines[-1]}
    [[ "$native" == "reused=0 of=6 failed=3"* ]]
    start_psk "$@"
    run with_shim "$CLIENT" "${two[@]}" "$PORT"
    assert_failure
    assert_equal "${lines[-1]}" "$native"
    local k
    for k in 2 4 6; do
        [ "$(offered_by $k)" != "-" ]
        grep -q "^conn=$k status=ok .*resumed=1" "$SLOG"
        grep -q "^data conn=$k bytes=0$" "$SLOG"
    done
    start_psk "$@"
    run with_shim "$CLIENT" --n 6 "${v[@]}" --cafile "$CA" "$cb" --pin "$CERT" \
        --alt --cafile "$CA" "$cb" --pin "$CERT" "$PORT"
    assert_success
    assert_equal "$(resumed)" 5
}

@test "a verify callback is asked again at the end of a resumed handshake: it refuses, the connection fails; it accepts, resumed" {
    judged_again --verify-cb --tls13
    judged_again --verify-cb --tls12
}

@test "a certificate-verify callback is asked again at the end of a resumed handshake: it refuses, the connection fails; it accepts, resumed" {
    judged_again --cert-verify-cb --tls13
    judged_again --cert-verify-cb --tls12
}

# A server whose certificate a trusted root signed through an intermediate
# CA it sends along: verification needs the chain the server sent, which a
# pooled session must carry for a callback to judge it again.
make_chain() {
    local d="$BATS_FILE_TMPDIR/chain"
    [ -f "$d/server.pem" ] && return 0
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=chain-root -keyout "$d/root.key" -out "$d/root.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=chain-int \
        -keyout "$d/int.key" -out "$d/int.csr" 2>/dev/null
    printf 'basicConstraints=critical,CA:true\nkeyUsage=keyCertSign\n' > "$d/int.ext"
    openssl x509 -req -in "$d/int.csr" -CA "$d/root.pem" -CAkey "$d/root.key" \
        -CAcreateserial -days 2 -extfile "$d/int.ext" -out "$d/int.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\n' > "$d/server.ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/int.pem" -CAkey "$d/int.key" \
        -CAcreateserial -days 2 -extfile "$d/server.ext" -out "$d/leaf.pem" 2>/dev/null
    cat "$d/leaf.pem" "$d/int.pem" > "$d/server.pem"
}

@test "a verify callback judges a session's server with the chain it sent (intermediate CA), in memory and from the store" {
    make_chain
    local d="$BATS_FILE_TMPDIR/chain" v
    for v in --tls13 --tls12; do
        CERT="$d/server.pem" KEY="$d/server.key" start_psk $v
        run with_shim "$CLIENT" --n 4 ${v/--tls13/} --cafile "$d/root.pem" --verify-cb \
            --pin "$d/leaf.pem" --sni localhost --verify-host localhost "$PORT"
        assert_success
        assert_equal "$(resumed)" 3
        # One process per connection, through the store.
        CERT="$d/server.pem" KEY="$d/server.key" start_psk $v
        local k
        for k in 1 2 3 4; do
            run env RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store$v" LD_PRELOAD="$PRELOAD" \
                timeout 60 "$CLIENT" --n 1 ${v/--tls13/} --cafile "$d/root.pem" --verify-cb \
                --pin "$d/leaf.pem" --sni localhost --verify-host localhost "$PORT"
            assert_success
        done
        assert_equal "$(resumed)" 3
    done
}

@test "an OCSP status callback that OpenSSL never calls (no staple asked for) does not stop resumption" {
    start_psk --tls13
    run with_shim "$CLIENT" --n 6 --cafile "$CA" --ocsp-cb any "$PORT"
    assert_success
    assert_equal "$(resumed)" 5
}

@test "not offered across CA directories, though both stores start empty" {
    start_psk --tls13
    mkdir -p "$BATS_TEST_TMPDIR/good" "$BATS_TEST_TMPDIR/empty"
    cp "$CA" "$BATS_TEST_TMPDIR/good/ca.pem"
    openssl rehash "$BATS_TEST_TMPDIR/good"
    # The second configuration trusts nothing: every one of its handshakes
    # must fail, as it would without the shim.
    run with_shim "$CLIENT" --n 6 --capath "$BATS_TEST_TMPDIR/good" \
        --alt --capath "$BATS_TEST_TMPDIR/empty" "$PORT"
    assert_failure
    assert_output --partial "failed=3"
    local k
    for k in 2 4 6; do assert_equal "$(offered_by $k)" "-"; done
    assert_equal "$(resumed)" 2
}

@test "not offered after the verify purpose changed" {
    start_psk --tls13
    alternate --cafile "$CA" -- --cafile "$CA" --purpose
}

@test "not offered after the application added a CA to the trust store" {
    start_psk --tls13
    run with_shim "$CLIENT" --n 4 --cafile "$CA" --add-ca-after "$BATS_FILE_TMPDIR/other.pem" "$PORT"
    assert_success
    assert_equal "$(offered_by 2)" "-"
    run sed -n 's/.*resumed=\([01]\).*/\1/p' "$SLOG"
    assert_equal "$(echo $output | tr -d ' ')" "0011"
}

@test "certificates verification loads lazily (a hashed CA directory) do not count as a change" {
    start_psk --tls13
    mkdir -p "$BATS_TEST_TMPDIR/capath"
    cp "$CA" "$BATS_TEST_TMPDIR/capath/ca.pem"
    openssl rehash "$BATS_TEST_TMPDIR/capath"
    run with_shim "$CLIENT" --n 5 --capath "$BATS_TEST_TMPDIR/capath" "$PORT"
    assert_success
    assert_equal "$(resumed)" 4
}

@test "not offered after the client certificate changed" {
    start_psk --tls13
    alternate -- --client-cert "$CLIENT_PEM"
}

@test "not offered after the cipher list changed (TLS 1.2)" {
    start_psk --tls12
    alternate --ciphers ECDHE-ECDSA-AES128-GCM-SHA256 -- \
        --ciphers ECDHE-ECDSA-AES256-GCM-SHA384 -- --tls12
}

@test "not offered to another server name" {
    start_psk --tls13
    alternate --sni a.test -- --sni b.test
}

@test "not offered after the server's certificate expired (notAfter)" {
    start_psk --tls13
    # The plain build: libfaketime hangs beside libasan, shim or not.
    local faketime=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
    # The client's clock a day on: the certificate (2 days) is still valid.
    run timeout 60 env LD_PRELOAD="$SHIM $faketime" FAKETIME=+1d "$CLIENT" --n 3 "$PORT"
    assert_success
    assert_equal "$(resumed)" 2
    # Three days on it has expired; unverified connections still succeed,
    # but no session is offered past the leaf's notAfter.
    : > "$SLOG"
    run timeout 60 env LD_PRELOAD="$SHIM $faketime" FAKETIME=+3d "$CLIENT" --n 3 "$PORT"
    assert_success
    assert_equal "$(offers)" 0
}

@test "not offered after the server's ticket lifetime" {
    start_psk --tls13 --lifetime 1
    run with_shim "$CLIENT" --n 3 --pause 1300 "$PORT"
    assert_success
    assert_equal "$(offers)" 0
    start_psk --tls13 --lifetime 60
    run with_shim "$CLIENT" --n 3 --pause 1300 "$PORT"
    assert_success
    assert_equal "$(resumed)" 2
    start_psk --tls12 --lifetime 1
    run with_shim "$CLIENT" --tls12 --n 3 --pause 1300 "$PORT"
    assert_success
    assert_equal "$(offers)" 0
}

@test "a connection the application refused after the handshake leaves no session (TLS 1.2)" {
    start_psk --tls12
    run with_shim "$CLIENT" --tls12 --reject --n 5 "$PORT"
    assert_success
    assert_equal "$(connections)" 5
    assert_equal "$(offers)" 0
    # Control: the same connections, used, do resume.
    : > "$SLOG"
    run with_shim "$CLIENT" --tls12 --n 5 "$PORT"
    assert_equal "$(resumed)" 4
}

@test "a handshake that fails verification still fails, and leaves no session" {
    start_psk --tls12
    run with_shim "$CLIENT" --tls12 --cafile "$BATS_FILE_TMPDIR/other.pem" --n 3 "$PORT"
    assert_failure
    assert_equal "$(offers)" 0
    start_psk --tls13
    run with_shim "$CLIENT" --cafile "$BATS_FILE_TMPDIR/other.pem" --n 3 "$PORT"
    assert_failure
    assert_equal "$(offers)" 0
}

@test "16 threads x 50 connections: no TLS 1.3 ticket is ever offered twice" {
    start_psk --tls13
    run with_shim "$CLIENT" --threads 16 --n 50 --quiet "$PORT"
    assert_success
    assert_equal "$(connections)" 800
    [ "$(offers)" -ge 700 ]
    assert_equal "$(offered_twice)" ""
}
