#!/usr/bin/env bats
# OCSP stapling: a status callback is a judge, and a resumed connection is
# shown the staple its session's full handshake received. The test server
# (pskserver --staple) staples a response made with `openssl ocsp` and logs
# the identities each ClientHello offered; the test client's status
# callback (--ocsp-cb POLICY) counts the staples it saw and how many
# different ones. Each test runs TLS 1.3 (OpenSSL calls the callback in a
# resumed handshake, which finds no staple of its own) and TLS 1.2 (OpenSSL
# does not call it: the shim does, once the resumed handshake completes).

load helpers

setup() {
    D="$BATS_FILE_TMPDIR"
    if [ ! -f "$D/good.der" ]; then
        make_staple "$D" good good.der
        make_staple "$D" revoked revoked.der
        make_staple "$D" good expired.der expired
    fi
    STORE="$BATS_TEST_TMPDIR/store"
}

# ocsp_client [options]: the test client verifying the server and asking
# for a staple, under the shim.
ocsp_client() {
    with_shim "$CLIENT" --cafile "$CA" --ocsp-request "$@" "$PORT"
}

# The same with the store in directory $1.
ocsp_stored() {
    local store="$1"
    shift
    RESUMESHIM_STORE="$store" ocsp_client "$@"
}

# Its counts, from the summary line in $output.
calls() { sed -n 's/.*status_calls=\([0-9]*\).*/\1/p' <<< "$output"; }
stapled() { sed -n 's/.*stapled=\([0-9]*\).*/\1/p' <<< "$output"; }
distinct() { sed -n 's/.*distinct=\([0-9]*\).*/\1/p' <<< "$output"; }
# Identities offered by connection K (1-based), or "-".
offered_by() { sed -n "s/^conn=$1 .*offered=//p" "$SLOG"; }

@test "a status callback is shown the full handshake's staple on every resumed connection" {
    local v
    for v in --tls13 --tls12; do
        cp "$BATS_FILE_TMPDIR/good.der" "$BATS_TEST_TMPDIR/staple.der"
        start_psk $v --staple "$BATS_TEST_TMPDIR/staple.der"
        run ocsp_client --ocsp-cb any --n 6
        assert_success
        assert_equal "$(resumed)" 5
        # called on every connection, each time with a staple
        assert_equal "$(calls) $(stapled)" "6 6"
        # The server now staples another response: resumed connections
        # still see the one their session's full handshake received.
        cp "$BATS_FILE_TMPDIR/revoked.der" "$BATS_TEST_TMPDIR/staple.der"
        run ocsp_client --ocsp-cb any --n 6
        assert_success
        assert_equal "$(distinct)" 1
    done
}

@test "the staple travels with the session through the store" {
    local v k
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/good.der"
        for k in 1 2 3 4 5 6; do
            run ocsp_stored "$STORE$v" --ocsp-cb must --n 1
            assert_success
            assert_output --partial "status_calls=1 stapled=1 distinct=1"
        done
        assert_equal "$(resumed)" 5
        assert_equal "$(offered_twice)" ""
    done
}

@test "a callback that refuses a missing staple resumes, because it is shown one" {
    local v
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/good.der"
        run ocsp_client --ocsp-cb must --n 6
        assert_success
        assert_equal "$(resumed)" 5
    done
}

@test "the absence of a staple is kept too: refused again, nothing ever offered" {
    local v
    for v in --tls13 --tls12; do
        # A server that staples nothing, and a callback that requires one:
        # every connection fails, without the shim as with it.
        start_psk $v
        run client --cafile "$CA" --ocsp-request --ocsp-cb must --n 4 "$PORT"
        assert_failure
        assert_output --partial "failed=4"
        start_psk $v
        run ocsp_client --ocsp-cb must --n 4
        assert_failure
        assert_output --partial "failed=4"
        assert_equal "$(offers)" 0
        # A callback that accepts a missing staple resumes.
        start_psk $v
        run ocsp_client --ocsp-cb any --n 6
        assert_success
        assert_equal "$(resumed)" 5
        assert_equal "$(stapled)" 0
    done
}

@test "a revoked staple: every connection fails, as without the shim, and nothing is offered" {
    local v
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/revoked.der"
        run client --cafile "$CA" --ocsp-request --ocsp-cb refuse-status=revoked --n 4 "$PORT"
        assert_failure
        assert_output --partial "failed=4"
        start_psk $v --staple "$BATS_FILE_TMPDIR/revoked.der"
        run ocsp_client --ocsp-cb refuse-status=revoked --n 4
        assert_failure
        assert_output --partial "failed=4"
        assert_equal "$(offers)" 0
    done
}

@test "a kept staple the callback refuses fails the connection as a full handshake would, and the server's sessions go" {
    local v
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/good.der"
        # A program that accepts the responder earns sessions...
        run ocsp_stored "$STORE$v" --ocsp-cb any --n 1
        assert_success
        # ...one that refuses it fails, exactly as it does without the shim
        # against the same server, though it was offered one of them...
        run client --cafile "$CA" --ocsp-request --ocsp-cb refuse-responder=resumeshim-test-ca \
            --n 1 "$PORT"
        assert_failure
        run ocsp_stored "$STORE$v" \
            --ocsp-cb refuse-responder=resumeshim-test-ca --n 1
        assert_failure
        assert_output --partial "failed=1"
        [ "$(offered_by 3)" != "-" ]
        # ...and the next process finds nothing left to offer.
        run ocsp_stored "$STORE$v" --ocsp-cb any --n 1
        assert_success
        assert_equal "$(offered_by 4)" "-"
    done
}

@test "a session whose staple is past its nextUpdate is not offered" {
    local v
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/expired.der"
        run ocsp_client --ocsp-cb any --n 4
        assert_success
        assert_equal "$(stapled)" 4
        assert_equal "$(offers)" 0
    done
}

@test "a handshake inside the first SSL_write is judged before the data: it resumes, and a refusal sends nothing" {
    local v
    for v in --tls13 --tls12; do
        start_psk $v --staple "$BATS_FILE_TMPDIR/good.der"
        run ocsp_stored "$STORE$v" --ocsp-cb any --mode write --n 4
        assert_success
        assert_equal "$(resumed)" 3
        # The refusing judge fails the write as without the shim, though
        # it was offered a session (TLS 1.3 refuses inside the handshake,
        # TLS 1.2 once it resumed), and not a byte reached the server.
        run client --cafile "$CA" --ocsp-request --ocsp-cb refuse-responder=resumeshim-test-ca \
            --mode write --n 1 "$PORT"
        assert_failure
        run ocsp_stored "$STORE$v" --ocsp-cb refuse-responder=resumeshim-test-ca --mode write --n 1
        assert_failure
        assert_output --partial "failed=1"
        [ "$(offered_by 6)" != "-" ]
        assert_equal "$(grep -c '^data conn=6 bytes=[1-9]' "$SLOG")" 0
    done
}

@test "a session earned without asking for a staple is not offered to a connection that asks" {
    start_psk --tls13 --staple "$BATS_FILE_TMPDIR/good.der"
    run with_shim "$CLIENT" --n 6 --cafile "$CA" --ocsp-cb any \
        --alt --cafile "$CA" --ocsp-cb any --ocsp-request "$PORT"
    assert_success
    assert_equal "$(offered_by 2)" "-"
    assert_equal "$(resumed)" 4
    assert_equal "$(offered_twice)" ""
}
