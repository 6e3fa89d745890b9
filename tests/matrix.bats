#!/usr/bin/env bats
# The servers of the matrix: the tests' client, unmodified and verifying
# the server, makes N connections in one process under the shim; each
# server's own log says how many resumed. The first connection of a run is
# a full handshake, so N-1 is everything a client can resume.

load helpers
load matrix

N=10

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    export CA CERT KEY
    mx_start_all
}

teardown_file() { mx_stop_all; }

# resumes SERVER EXPECTED [client options]: N connections without the shim
# (none may resume) and N with it (EXPECTED must).
resumes() {
    local server="$1" expected="$2"
    shift 2
    local port
    port=$(srv_port "$server")
    srv_reset "$server"
    run client --n "$N" --cafile "$CA" --sni localhost --verify-host localhost "$@" "$port"
    assert_success
    assert_equal "$(srv_count "$server")" "0 $N"
    srv_reset "$server"
    run with_shim "$CLIENT" --n "$N" --cafile "$CA" --sni localhost --verify-host localhost \
        "$@" "$port"
    assert_success
    assert_equal "$(srv_count "$server")" "$expected $N"
}

@test "each server of the matrix listens on a port of its own" {
    local s
    for s in $ALL_SERVERS; do srv_port "$s"; done > "$BATS_TEST_TMPDIR/ports"
    assert_equal "$(sort -u "$BATS_TEST_TMPDIR/ports" | wc -l)" "$(wc -l < "$BATS_TEST_TMPDIR/ports")"
    run grep -c conflicting "$MX/nginx/error.log"
    assert_output 0
}
@test "nginx, session tickets, TLS 1.3" { resumes nginx13 $((N - 1)); }
@test "nginx, session tickets, TLS 1.2" { resumes nginx12 $((N - 1)); }
@test "nginx, tickets off, shared session cache (stateful), TLS 1.3" { resumes nginx-stateful13 $((N - 1)); }
@test "nginx, tickets off, shared session cache (stateful), TLS 1.2" { resumes nginx-stateful12 $((N - 1)); }
@test "nginx, no tickets and no cache: nothing to resume, every request served, TLS 1.3" { resumes nginx-none13 0; }
@test "nginx, no tickets and no cache: nothing to resume, every request served, TLS 1.2" { resumes nginx-none12 0; }
@test "openssl s_server, TLS 1.3" { resumes s_server13 $((N - 1)); }
@test "openssl s_server, TLS 1.2" { resumes s_server12 $((N - 1)); }
@test "gnutls-serv (GnuTLS's tickets), TLS 1.3" { resumes gnutls13 $((N - 1)); }
@test "gnutls-serv (GnuTLS's tickets), TLS 1.2" { resumes gnutls12 $((N - 1)); }
@test "haproxy terminating TLS before a plain backend, TLS 1.3" { resumes haproxy13 $((N - 1)); }
@test "haproxy terminating TLS before a plain backend, TLS 1.2" { resumes haproxy12 $((N - 1)); }
