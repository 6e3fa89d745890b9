#!/usr/bin/env bats
# GnuTLS clients under the shim: an unmodified GnuTLS program resumes, in
# one process and across processes through the store, and never more than
# it may. GnuTLS verifies nothing again on a resumed handshake when the
# program asked it to verify during the handshake, nor runs a verify
# callback: the shim does, before gnutls_handshake returns success (the
# judgment). A session it let through wrongly would show as a connection
# that succeeds where it must fail: every trust test here runs the same
# client without and with the shim and wants the same verdicts.
# Judged by the servers' logs (nginx's $ssl_session_reused, the identities
# tests/bin/pskserver saw offered) and by the client's exit code and
# verdicts, not by the shim's own counters.

load helpers
load gnutls

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    # A second, unrelated CA and a server certificate from it (the same
    # names): trusted by nobody who trusts only the first.
    mkdir -p "$BATS_FILE_TMPDIR/other"
    make_certs "$BATS_FILE_TMPDIR/other"
    OCA="$BATS_FILE_TMPDIR/other/ca.pem" OCERT="$BATS_FILE_TMPDIR/other/server.pem"
    OKEY="$BATS_FILE_TMPDIR/other/server.key"
    # Client certificates, each from a CA of its own: a guest and an admin.
    make_client_cert "$BATS_FILE_TMPDIR" guest
    make_client_cert "$BATS_FILE_TMPDIR" admin
    # A CRL of the first CA revoking the server's certificate.
    printf 'crl_next_update = 2\ncrl_number = 1\n' > "$BATS_FILE_TMPDIR/crl.tmpl"
    certtool --generate-crl --load-ca-privkey "$BATS_FILE_TMPDIR/ca.key" \
        --load-ca-certificate "$CA" --load-certificate "$CERT" \
        --template "$BATS_FILE_TMPDIR/crl.tmpl" --outfile "$BATS_FILE_TMPDIR/revoked.crl" 2> /dev/null
    CRL="$BATS_FILE_TMPDIR/revoked.crl"
    export CA CERT KEY OCA OCERT OKEY CRL
}

# make_client_cert DIR NAME: DIR/NAME-ca.pem, and DIR/NAME.pem and
# DIR/NAME.key, a client certificate (CN=NAME) from that CA.
make_client_cert() {
    local d="$1" n="$2"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3 \
        -subj "/CN=$n-ca" -keyout "$d/$n-ca.key" -out "$d/$n-ca.pem" 2> /dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$n" \
        -keyout "$d/$n.key" -out "$d/$n.csr" 2> /dev/null
    printf 'extendedKeyUsage=clientAuth\n' > "$d/$n.ext"
    openssl x509 -req -in "$d/$n.csr" -CA "$d/$n-ca.pem" -CAkey "$d/$n-ca.key" \
        -CAcreateserial -days 2 -extfile "$d/$n.ext" -out "$d/$n.pem" 2> /dev/null
}

setup() {
    STORE="$BATS_TEST_TMPDIR/store"
}

# The test client without the shim, under it (memory only), and under it
# with the store.
gc() { timeout 120 "$GNUTLSCLIENT" "$@"; }
gc_shim() { LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTLSCLIENT" "$@"; }
gc_stored() { RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTLSCLIENT" "$@"; }

# Lines of $output: connections that worked, that the client saw resumed.
oks() { grep -c ' verify=ok$' <<< "$output" || true; }
client_resumed() { grep -c '^conn=[0-9]* resumed=1 verify=ok$' <<< "$output" || true; }

# verdicts CMD...: CMD's exit code and each connection's verdict, without
# whether it resumed (which is what the shim changes), one line each.
verdicts() {
    local rc=0 out
    out=$("$@" 2> /dev/null) || rc=$?
    printf 'exit=%s\n' "$rc"
    sed -n 's/^\(conn=[0-9]*\) resumed=[01] /\1 /p' <<< "$out" | sort -t= -k2 -n
}

# same_verdicts CMD-WITHOUT CMD-WITH ARGS...: the verdicts of the test
# client run with ARGS by each are the same; sets $want to them.
same_verdicts() {
    local without="$1" with="$2"
    shift 2
    want=$(verdicts "$without" "$@")
    run verdicts "$with" "$@"
    assert_output "$want"
}

# pskserver's line for connection K (1-based): the identities it was
# offered, or "-".
offered_by() { sed -n "s/^conn=$1 .*offered=//p" "$SLOG"; }

# Every other connection, 2, 4, ... of N, was offered nothing.
evens_offered_nothing() {
    local k
    for k in $(seq 2 2 "$1"); do
        assert_equal "conn $k: $(offered_by "$k")" "conn $k: -"
    done
}

@test "one process, 10 connections, TLS 1.3 and 1.2, verified in the handshake and by hand: 0 resumed without the shim, 9 with it" {
    start_nginx
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            local args=(--connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode"
                        --count 10)
            : > "$SLOG"
            run gc "${args[@]}"
            assert_success
            assert_equal "$(oks)" 10
            assert_equal "$(nginx_requests)" 10
            assert_equal "$(nginx_resumed)" 0
            : > "$SLOG"
            run gc_shim "${args[@]}"
            assert_success
            assert_equal "$(oks)" 10
            assert_equal "$(nginx_requests)" 10
            assert_equal "$(nginx_resumed)" 9
            assert_equal "$(grep -c " TLSv$v " "$SLOG")" 10
            # GnuTLS says so too
            assert_equal "$(client_resumed)" 9
        done
    done
}

@test "a verify function, on the credentials or the session: asked again on every resumed connection, 9 of 10 resumed" {
    start_nginx
    local v mode
    for v in 1.3 1.2; do
        for mode in callback sessioncb; do
            : > "$SLOG"
            run gc --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" --count 10
            assert_success
            assert_line "connections=10 resumed=0 failed=0 callback_calls=10"
            : > "$SLOG"
            run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" \
                --count 10
            assert_success
            assert_equal "$(oks)" 10
            assert_line "connections=10 resumed=9 failed=0 callback_calls=10"
            assert_equal "$(nginx_requests)" 10
            assert_equal "$(nginx_resumed)" 9
        done
    done
}

@test "a session the program sets itself (--keep) is left alone, even with a verify callback" {
    start_nginx
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake callback; do
            : > "$SLOG"
            run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" \
                --count 10 --keep
            assert_success
            assert_equal "$(oks)" 10
            # as without the shim: the program resumes its own session, and
            # its callback ran on the one full handshake only
            assert_equal "$(nginx_resumed)" 9
            [ "$mode" != callback ] ||
                assert_line "connections=10 resumed=9 failed=0 callback_calls=1"
        done
    done
}

@test "GNUTLS_NO_TICKETS (as libcurl-gnutls sets it): resumed in TLS 1.3 under the shim" {
    start_nginx
    : > "$SLOG"
    run gc --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.3 --no-tickets --count 10
    assert_success
    assert_equal "$(nginx_resumed)" 0
    : > "$SLOG"
    run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.3 --no-tickets --count 10
    assert_success
    assert_equal "$(oks)" 10
    assert_equal "$(nginx_requests)" 10
    assert_equal "$(nginx_resumed)" 9
}

@test "4 threads, 40 connections: no TLS 1.3 ticket offered twice" {
    start_psk --tls13
    run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --threads 4 --count 40
    assert_success
    assert_equal "$(oks)" 40
    assert_equal "$(connections)" 40
    run offered_twice
    assert_output ""
    # pskserver serves one connection at a time, two tickets each: the
    # threads' first connections may find none yet, the rest resume
    [ "$(resumed)" -ge 30 ] || fail "resumed $(resumed) of 40"
    # and against nginx, the resumptions as it counts them
    start_nginx
    run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --threads 4 --count 40
    assert_success
    assert_equal "$(oks)" 40
    assert_equal "$(nginx_requests)" 40
    [ "$(nginx_resumed)" -ge 30 ] || fail "nginx resumed $(nginx_resumed) of 40"
}

@test "a hostile server: 100 tickets a connection, and tickets of 60 kB, cost the client a pool's worth at most, and nothing breaks" {
    start_psk --tls13 --tickets 100
    run env RESUMESHIM_POOL_SIZE=4 RESUMESHIM_STATS=1 LD_PRELOAD="$PRELOAD" timeout 120 \
        "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" --count 5
    assert_success
    assert_equal "$(oks)" 5
    assert_equal "$(resumed)" 4
    run offered_twice
    assert_output ""
    # kept: at most a pool's worth from each of the 5 connections
    run env RESUMESHIM_POOL_SIZE=4 RESUMESHIM_STATS=1 LD_PRELOAD="$PRELOAD" timeout 120 \
        "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" --count 5
    local kept
    kept=$(sed -n 's/.* tickets=\([0-9]*\).*/\1/p' <<< "$output")
    [ "$kept" -le 20 ] || fail "kept $kept tickets"
    # tickets too large to keep are not kept: every connection a full one
    start_psk --tls13 --big-tickets 60000
    run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --count 3
    assert_success
    assert_equal "$(oks)" 3
    assert_equal "$(offers)" 0
}

@test "4 processes at once through the store: no TLS 1.3 ticket offered twice, across processes" {
    start_psk --tls13
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --count 4
    assert_success
    local pids=() i rc
    for i in 1 2 3 4; do
        gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --count 6 \
            > "$BATS_TEST_TMPDIR/out.$i" 2>&1 &
        pids+=($!)
    done
    for i in "${pids[@]}"; do
        rc=0
        wait "$i" || rc=$?
        assert_equal "exit $rc" "exit 0"
    done
    assert_equal "$(cat "$BATS_TEST_TMPDIR"/out.* | grep -c ' verify=ok$')" 24
    assert_equal "$(connections)" 28
    run offered_twice
    assert_output ""
    [ "$(resumed)" -ge 20 ] || fail "resumed $(resumed) of 28"
}

# In one process, connections alternating between two configurations, A
# (first) and B: B's verdicts under the shim are those without it, and B
# is never offered what A earned (pskserver saw nothing offered on B's
# connections) while A resumes.
@test "one process, alternating trust files (another CA): verdicts as without the shim; checked in the handshake, nothing offered to the other" {
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            start_psk --tls1${v#1.}
            same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafiles "$CA,$OCA" \
                --verify "$mode" --count 10
            assert_line "exit=1"
            assert_line "conn=1 verify=fail"
            assert_line "conn=8 verify=ok"
            # Checked during the handshake, which a resumption skips: the
            # second run, under the shim, is pskserver's 11th to 20th.
            if [ "$mode" = inhandshake ]; then
                evens_offered_nothing 20
                assert_equal "$(resumed)" 4
            fi
        done
    done
}

# A program checking by hand re-judges a resumed session's certificates
# against what it trusts now, so the verdicts above hold either way; still,
# a session earned under one trust set offered to a connection under
# another is a resumption that fails after the handshake, and in TLS 1.3 a
# ticket spent.
@test "verified by hand: a session earned trusting one CA is not offered to a connection trusting another" {
    local v
    for v in 1.3 1.2; do
        start_psk --tls1${v#1.}
        run gc_shim --connect "127.0.0.1:$PORT" --cafiles "$CA,$OCA" --verify byhand --count 10
        assert_failure
        evens_offered_nothing 10
        assert_equal "$(resumed)" 4
    done
    # across processes, and the first run's sessions are still there
    start_nginx
    for v in 1.3 1.2; do
        across --cafile "$CA" --tls "$v" --verify byhand -- \
            --cafile "$OCA" --tls "$v" --verify byhand -- \
            --cafile "$CA" --tls "$v" --verify byhand
    done
}

@test "one process, alternating names (wrong.example): verdicts as without the shim, nothing offered to the other" {
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            start_psk --tls1${v#1.}
            same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" \
                --names localhost,wrong.example --verify "$mode" --count 10
            assert_line "exit=1"
            assert_line "conn=1 verify=fail"
            assert_line "conn=8 verify=ok"
            evens_offered_nothing 20
            assert_equal "$(resumed)" 4
        done
    done
}

@test "one process, a callback pinning another certificate: every connection fails, as without the shim" {
    start_nginx
    same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --verify callback \
        --pin "$OCERT" --count 10
    assert_line "exit=1"
    refute_line --partial "verify=ok"
    assert_equal "$(nginx_requests)" 0
}

# across ARGS-EARN -- ARGS-JUDGE -- ARGS-CONTROL: with a fresh store, a run
# with ARGS-EARN earns sessions; a run with ARGS-JUDGE then reaches the
# verdicts it reaches without the shim; a run with ARGS-CONTROL (when given)
# then resumes its first connection from what the first run left, as the
# server ($SLOG, nginx) logs it: the store held sessions, and the judged run
# was not offered them. All against 127.0.0.1:$PORT.
across() {
    local earn=() judge=() control=()
    while [ "$1" != -- ]; do earn+=("$1"); shift; done
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do judge+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    control=("$@")
    rm -rf "$STORE"
    run gc_stored --connect "127.0.0.1:$PORT" "${earn[@]}" --count 3
    assert_success
    same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" "${judge[@]}" --count 3
    if [ ${#control[@]} -gt 0 ]; then
        : > "$SLOG"
        run gc_stored --connect "127.0.0.1:$PORT" "${control[@]}" --count 1
        assert_success
        assert_equal "$(nginx_requests)" 1
        assert_equal "$(nginx_resumed)" 1
    fi
}

@test "across processes, another CA: sessions earned trusting one do not pass a run trusting the other" {
    start_nginx
    local v mode control
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            # the store still holds the first run's sessions after the
            # second (checked by hand: see the test above)
            control=(--cafile "$CA" --tls "$v" --verify "$mode")
            [ "$mode" = inhandshake ] || control=()
            across --cafile "$CA" --tls "$v" --verify "$mode" -- \
                --cafile "$OCA" --tls "$v" --verify "$mode" -- "${control[@]}"
            assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail\nconn=1 verify=fail\nconn=2 verify=fail')"
        done
    done
}

@test "across processes, another name: sessions earned for localhost are not offered to wrong.example" {
    start_nginx
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            across --cafile "$CA" --name localhost --tls "$v" --verify "$mode" -- \
                --cafile "$CA" --name wrong.example --tls "$v" --verify "$mode" -- \
                --cafile "$CA" --name localhost --tls "$v" --verify "$mode"
            assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail\nconn=1 verify=fail\nconn=2 verify=fail')"
        done
    done
}

@test "across processes, verification off then on: a server of another CA still fails" {
    # nginx with the other CA's certificate: the client trusts only the
    # first CA, and with verification off it connects all the same.
    local d
    d=$(mktemp -d "$BATS_TEST_TMPDIR/nginx-other.XXXX")
    nginx_start "$d" "$OCERT" "$OKEY"
    echo "$NGINX_PID" >> "$BATS_TEST_TMPDIR/pids"
    export PORT SLOG
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake byhand callback; do
            across --cafile "$CA" --tls "$v" --verify none -- \
                --cafile "$CA" --tls "$v" --verify "$mode"
            assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail\nconn=1 verify=fail\nconn=2 verify=fail')"
        done
    done
}

@test "across processes, a callback pinning another certificate fails every connection, as without the shim" {
    start_nginx
    local v earn
    for v in 1.3 1.2; do
        for earn in inhandshake callback; do
            across --cafile "$CA" --tls "$v" --verify "$earn" -- \
                --cafile "$CA" --tls "$v" --verify callback --pin "$OCERT"
            assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail\nconn=1 verify=fail\nconn=2 verify=fail')"
        done
    done
    # pinning the server's own certificate: it connects, resumes, and the
    # callback ran on every connection (the refusals above dropped the
    # server's sessions: the first connection is a full handshake)
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --verify callback --pin "$CERT" \
        --count 3
    assert_success
    assert_line "connections=3 resumed=2 failed=0 callback_calls=3"
}

@test "across processes, the store: a GnuTLS program run once per request resumes runs 2 to 10" {
    start_nginx
    local v mode i
    for v in 1.3 1.2; do
        for mode in inhandshake byhand; do
            rm -rf "$STORE"
            : > "$SLOG"
            for i in $(seq 10); do
                run gc_stored --connect "127.0.0.1:$PORT" --name localhost --cafile "$CA" \
                    --tls "$v" --verify "$mode"
                assert_success
                assert_output --partial "verify=ok"
            done
            assert_equal "$(nginx_requests)" 10
            assert_equal "$(nginx_resumed)" 9
            assert_equal "$(grep -c "^[r.] TLSv$v localhost$" "$SLOG")" 10
        done
    done
}

@test "never across libraries: OpenSSL's sessions in the store are not offered to a GnuTLS program, nor the reverse" {
    start_nginx
    local v
    for v in 1.3 1.2; do
        # OpenSSL first
        rm -rf "$STORE"
        : > "$SLOG"
        run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 "$CLIENT" \
            --tls1${v#1.} --cafile "$CA" --sni localhost --verify-host localhost --n 3 "$PORT"
        assert_success
        [ "$(nginx_requests)" -eq 3 ]
        : > "$SLOG"
        run gc_stored --connect "127.0.0.1:$PORT" --name localhost --cafile "$CA" --tls "$v" \
            --count 3
        assert_success
        assert_equal "$(nginx_requests)" 3
        assert_equal "$(head -1 "$SLOG")" ". TLSv$v localhost"
        # what OpenSSL left is still there, for OpenSSL
        : > "$SLOG"
        run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 "$CLIENT" \
            --tls1${v#1.} --cafile "$CA" --sni localhost --verify-host localhost "$PORT"
        assert_success
        assert_equal "$(head -1 "$SLOG")" "r TLSv$v localhost"
        # GnuTLS first
        rm -rf "$STORE"
        run gc_stored --connect "127.0.0.1:$PORT" --name localhost --cafile "$CA" --tls "$v" \
            --count 3
        assert_success
        : > "$SLOG"
        run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 "$CLIENT" \
            --tls1${v#1.} --cafile "$CA" --sni localhost --verify-host localhost --n 3 "$PORT"
        assert_success
        assert_equal "$(nginx_requests)" 3
        assert_equal "$(head -1 "$SLOG")" ". TLSv$v localhost"
        : > "$SLOG"
        run gc_stored --connect "127.0.0.1:$PORT" --name localhost --cafile "$CA" --tls "$v"
        assert_success
        assert_equal "$(head -1 "$SLOG")" "r TLSv$v localhost"
    done
}

# edge MODE CA NAME MODE CA NAME: tests/bin/verifyedge's two connections
# without and with the shim; the verdicts must be the same, and the second
# connection must fail.
edge() {
    local want
    run timeout 60 "$ROOT/tests/bin/verifyedge" "$PORT" "$@"
    assert_line --index 1 --partial 'handshake=fail'
    want=$(sed 's/ resumed=.*//' <<< "$output")
    run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/verifyedge" "$PORT" "$@"
    assert_equal "$(sed 's/ resumed=.*//' <<< "$output")" "$want"
}

@test "a check inside the handshake, set every way GnuTLS allows: no session passes a check it would fail" {
    start_nginx
    # a host name given as typed data of size 0 (a NUL-terminated string)
    edge cert2 "$CA" localhost cert2 "$CA" wrong.example
    # trust given through the credentials' own trust list
    edge trustlist "$CA" localhost trustlist "$OCA" localhost
    # a check set, then taken away (set_verify_function(NULL)), then a real one
    edge unset "$OCA" localhost plain "$OCA" localhost
    # the name changed in its buffer after the call (GnuTLS reads it in the handshake)
    edge late "$CA" localhost plain "$CA" wrong.example
    # and the ordinary way still resumes
    run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/verifyedge" "$PORT" \
        plain "$CA" localhost plain "$CA" localhost cert2 "$CA" localhost cert2 "$CA" localhost
    assert_output "conn 1 handshake=ok resumed=0
conn 2 handshake=ok resumed=1
conn 3 handshake=ok resumed=0
conn 4 handshake=ok resumed=1"
}

@test "one program with both libraries (tests/dualclient.c): each resumes its own sessions, none crosses" {
    start_nginx
    local n=5
    run timeout 120 "$ROOT/tests/bin/dualclient" "$PORT" "$CA" "$n"
    assert_success
    assert_equal "$(nginx_requests)" $((2 * n))
    assert_equal "$(nginx_resumed)" 0
    : > "$SLOG"
    run env LD_PRELOAD="$PRELOAD" timeout 120 "$ROOT/tests/bin/dualclient" "$PORT" "$CA" "$n"
    assert_success
    assert_equal "$(nginx_requests)" $((2 * n))
    # Each library's first connection is a full handshake, whatever the
    # other library holds by then; every later one resumes.
    assert_equal "$(grep -c '^lib=openssl resumed=1$' <<< "$output")" $((n - 1))
    assert_equal "$(grep -c '^lib=gnutls resumed=1$' <<< "$output")" $((n - 1))
    assert_equal "$(sed -n '1p;2p' <<< "$output")" "lib=openssl resumed=0
lib=gnutls resumed=0"
    assert_equal "$(nginx_resumed)" $((2 * n - 2))
}

@test "the priority string is in the key: a session earned under TLS 1.3 priorities is not offered under TLS 1.2 ones" {
    start_psk
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.3 --count 2
    assert_success
    assert_equal "$(offers)" 1
    : > "$SLOG"
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 --count 2
    assert_success
    # the first connection under the other priorities is offered nothing;
    # the second resumes what the first earned
    assert_equal "$(head -1 "$SLOG" | sed 's/.*offered=//')" "-"
    assert_equal "$(offers)" 1
}

@test "RESUMESHIM_DISABLE=1: nothing resumed, in one process or through the store" {
    start_nginx
    local v i
    for v in 1.3 1.2; do
        : > "$SLOG"
        run env RESUMESHIM_DISABLE=1 LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTLSCLIENT" \
            --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --count 10
        assert_success
        assert_equal "$(oks)" 10
        rm -rf "$STORE"
        for i in 1 2 3; do
            run env RESUMESHIM_DISABLE=1 RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" \
                timeout 60 "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v"
            assert_success
        done
        assert_equal "$(nginx_requests)" 13
        assert_equal "$(nginx_resumed)" 0
    done
}

@test "the program's output is unchanged: the shim writes nothing on stdout, even logging everything" {
    start_nginx
    local d="$BATS_TEST_TMPDIR"
    gc --connect "127.0.0.1:$PORT" --cafile "$CA" --count 5 > "$d/out0" 2> /dev/null
    RESUMESHIM_LOG=debug RESUMESHIM_STATS=1 RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" \
        "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --cafile "$CA" --count 5 \
        > "$d/out1" 2> "$d/err1"
    # the same lines, but for whether each connection resumed
    run diff <(sed 's/ resumed=[01] / /' "$d/out0") <(sed 's/ resumed=[01] / /' "$d/out1")
    assert_success
    assert_equal "$(grep -c 'resumed=1' "$d/out1")" 4
    # it did run, and said so where it may
    grep -q '^resumeshim\[' "$d/err1"
}

# The judgment. The key chooses which session to offer; after a resumed
# handshake, the check the resumption skipped is asked, with the session's
# final state. Each case below is one where the key is the same and the
# check's verdict is not: without the judgment the shim let the second in.

# prio V: the priorities of protocol V, as --step prio: gives them.
prio() { echo "prio:NORMAL:-VERS-ALL:+VERS-TLS$1"; }

# alternating WANT ARGS...: the test client with ARGS (two configurations,
# --then between them), 6 connections in one process, without and with the
# shim: the same verdicts, and the same errors (--errors); WANT the first
# two of them ("ok fail": the first configuration passes, the second not).
# nginx served only the connections that passed: a refused one moves no
# data.
alternating() {
    local want_first="$1" want_second="$2" expect k
    shift 2
    : > "$SLOG"
    same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --errors --count 6 "$@"
    expect="exit=1"
    for k in 0 1 2 3 4 5; do
        local w=$want_first
        [ $((k % 2)) = 0 ] || w=$want_second
        case $w in
            ok) expect+=$'\n'"conn=$k verify=ok" ;;
            *) expect+=$'\n'"conn=$k verify=fail error=$w" ;;
        esac
    done
    assert_equal "$want" "$expect"
    local passed
    passed=$(grep -c 'verify=ok$' <<< "$want" || true)
    # nginx logs each request after both runs: without and with the shim
    assert_equal "$(nginx_requests)" $((2 * passed))
}

# judged_across EARN -- JUDGE: through the store, a run with EARN's
# arguments earns sessions; a run with JUDGE's reaches the verdicts (and
# errors) it reaches without the shim, every connection refused.
judged_across() {
    across "$@"
    assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail\nconn=1 verify=fail\nconn=2 verify=fail')"
}

@test "judged: set_verify_cert(ULTRA) then the priorities, and the reverse (GnuTLS keeps the later profile): in one process and through the store" {
    start_nginx
    local v
    for v in 1.3 1.2; do
        # the profile of the priorities, set last, replaces ULTRA: the
        # P-256 certificate passes; ULTRA set last does not
        alternating ok GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR --cafile "$CA" \
            --step verify:ultra --step "$(prio "$v")" --then \
            --step "$(prio "$v")" --step verify:ultra
        judged_across --cafile "$CA" --step verify:ultra --step "$(prio "$v")" -- \
            --cafile "$CA" --step "$(prio "$v")" --step verify:ultra
    done
}

@test "judged: repetitions: set_verify_cert(ULTRA) then set_verify_cert(0), and CRL checks off in a first priority string" {
    start_nginx
    local v
    for v in 1.3 1.2; do
        # a second set_verify_cert with no flags leaves the first's profile
        alternating ok GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR --cafile "$CA" \
            --step "$(prio "$v")" --step verify:0 --then \
            --step "$(prio "$v")" --step verify:ultra --step verify:0
        judged_across --cafile "$CA" --step "$(prio "$v")" --step verify:0 -- \
            --cafile "$CA" --step "$(prio "$v")" --step verify:ultra --step verify:0
        # flags of a first priority string stay when a second is set: CRL
        # checks off, a revoked server passes; checked, it does not
        alternating ok GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR --cafile "$CA" --crlfile "$CRL" \
            --step "$(prio "$v"):%VERIFY_DISABLE_CRL_CHECKS" --step "$(prio "$v")" \
            --step verify:0 --then --step "$(prio "$v")" --step verify:0
        judged_across --cafile "$CA" --crlfile "$CRL" \
            --step "$(prio "$v"):%VERIFY_DISABLE_CRL_CHECKS" --step "$(prio "$v")" --step verify:0 -- \
            --cafile "$CA" --crlfile "$CRL" --step "$(prio "$v")" --step verify:0
    done
}

@test "judged: a stricter system configuration (min-verification-profile) refuses what a run without it earned" {
    start_nginx
    printf '[overrides]\nmin-verification-profile = ultra\n' > "$BATS_TEST_TMPDIR/ultra.cfg"
    gc_strict() { GNUTLS_SYSTEM_PRIORITY_FILE="$BATS_TEST_TMPDIR/ultra.cfg" gc "$@"; }
    gc_strict_stored() { GNUTLS_SYSTEM_PRIORITY_FILE="$BATS_TEST_TMPDIR/ultra.cfg" gc_stored "$@"; }
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake callback; do
            rm -rf "$STORE"
            run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" \
                --count 3
            assert_success
            same_verdicts gc_strict gc_strict_stored --connect "127.0.0.1:$PORT" --cafile "$CA" \
                --tls "$v" --verify "$mode" --errors --count 3
            assert_line "exit=1"
            refute_line --partial "verify=ok"
        done
    done
}

@test "judged: a trust file rewritten in place with another CA, same size and times: refused" {
    start_nginx
    # Both CAs padded to one size (GnuTLS reads past the text before a PEM
    # block), so that the file keeps its device, inode, size and times.
    local f="$BATS_TEST_TMPDIR/trust.pem" pad="$BATS_TEST_TMPDIR/pad"
    padded() { head -c $((1200 - $(wc -c < "$1"))) /dev/zero | tr '\0' '#'; echo; cat "$1"; }
    padded "$CA" > "$BATS_TEST_TMPDIR/ca.padded"
    padded "$OCA" > "$BATS_TEST_TMPDIR/other.padded"
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake callback; do
            cp "$BATS_TEST_TMPDIR/ca.padded" "$f"
            touch -d '2026-01-01 00:00:00' "$f"
            touch -r "$f" "$pad"
            rm -rf "$STORE"
            run gc_stored --connect "127.0.0.1:$PORT" --cafile "$f" --tls "$v" --verify "$mode" \
                --count 3
            assert_success
            local before after
            before=$(stat -c '%d %i %s %Y %y' "$f")
            cat "$BATS_TEST_TMPDIR/other.padded" > "$f"
            touch -r "$pad" "$f"
            after=$(stat -c '%d %i %s %Y %y' "$f")
            assert_equal "$after" "$before"
            same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" --cafile "$f" --tls "$v" \
                --verify "$mode" --errors --count 3
            refute_line --partial "verify=ok"
        done
    done
}

@test "judged: a verify function that refuses fails every resumed connection, with the error a full handshake gives" {
    start_nginx
    local v mode
    for v in 1.3 1.2; do
        for mode in callback sessioncb; do
            rm -rf "$STORE"
            run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" \
                --count 3
            assert_success
            # resumed, and asked on every connection
            assert_line "connections=3 resumed=2 failed=0 callback_calls=3"
            : > "$SLOG"
            same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" \
                --verify "$mode" --pin "$OCERT" --errors --count 3
            assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=fail error=GNUTLS_E_CERTIFICATE_ERROR\nconn=1 verify=fail error=GNUTLS_E_CERTIFICATE_ERROR\nconn=2 verify=fail error=GNUTLS_E_CERTIFICATE_ERROR')"
            # no request reached the server, without the shim or with it
            assert_equal "$(nginx_requests)" 0
            # and the refusal dropped the server's sessions, from the store too
            : > "$SLOG"
            run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" --verify "$mode" \
                --count 1
            assert_success
            assert_equal "$(nginx_resumed)" 0
        done
    done
}

@test "gnutls-cli --x509cafile, run once per connection through the store: 9 of 10 resumed, its verify function asked each time" {
    start_nginx
    local i out="$BATS_TEST_TMPDIR/out"
    printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' > "$BATS_TEST_TMPDIR/req"
    rm -rf "$STORE"
    for i in $(seq 10); do
        timeout 60 "$ROOT/scripts/resumeshim" --store "$STORE" gnutls-cli --x509cafile "$CA" \
            -p "$PORT" localhost < "$BATS_TEST_TMPDIR/req" > "$out" 2>&1 || fail "run $i: exit $?"
        # its verify function printed the certificate, resumed or not
        grep -q "subject \`CN=localhost'" "$out" || fail "run $i: no certificate printed"
        grep -q '^ok$' "$out" || fail "run $i: no page"
    done
    assert_equal "$(nginx_requests)" 10
    [ "$(nginx_resumed)" -ge 9 ] || fail "resumed $(nginx_resumed) of 10"
    # trusting another CA, every run fails as without the shim
    : > "$SLOG"
    for i in 1 2 3; do
        run timeout 60 "$ROOT/scripts/resumeshim" --store "$STORE" gnutls-cli --x509cafile "$OCA" \
            -p "$PORT" localhost < "$BATS_TEST_TMPDIR/req"
        assert_failure
    done
    assert_equal "$(nginx_requests)" 0
}

# The client's identity, which no judgment of the server catches: it stays
# in the key.

@test "PSK credentials (TLS 1.2): another username, or alice with another key, is never offered alice's session" {
    local key=0102030405060708090a0b0c0d0e0f10 wrong=ffff030405060708090a0b0c0d0e0f10
    start_psk --tls12 --psk "$key"
    same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 \
        --psks "alice:$key,bob:$key,alice:$wrong" --count 6
    assert_equal "$want" "$(printf 'exit=1\nconn=0 verify=ok\nconn=1 verify=ok\nconn=2 verify=fail error=GNUTLS_E_FATAL_ALERT_RECEIVED\nconn=3 verify=ok\nconn=4 verify=ok\nconn=5 verify=fail error=GNUTLS_E_FATAL_ALERT_RECEIVED')"
    # the server saw each username as it was: bob is never alice (the
    # second run is pskserver's 7th to 12th connection)
    assert_equal "$(sed -n 's/^conn=\([0-9]*\) status=ok .* psk=\([a-z]*\) .*/\1 \2/p' "$SLOG" | tr '\n' ' ')" \
        "1 alice 2 bob 4 alice 5 bob 7 alice 8 bob 10 alice 11 bob "
    # ...and what alice earned resumes alice's next connection
    assert_equal "$(sed -n 's/^conn=10 .*resumed=\([01]\).*/\1/p' "$SLOG")" 1
    # through the store
    rm -rf "$STORE"
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 --psk "alice:$key" --count 2
    assert_success
    : > "$SLOG"
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 --psk "bob:$key"
    assert_success
    assert_equal "$(sed -n 's/.* psk=\([a-z]*\) .*/\1/p' "$SLOG")" bob
    assert_equal "$(offers)" 0
    same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 \
        --psk "alice:$wrong"
    assert_line --partial "verify=fail"
}

@test "a socket the program corked (TCP_CORK) keeps what it holds: the first write after a handshake is not pushed out of it" {
    start_psk --tls12
    run timeout 60 "$ROOT/tests/bin/corkclient" 127.0.0.1 "$PORT" "$CA" 1.2
    assert_success
    # held back by the cork: the request's first line is there to be held
    assert_line --regexp "^unsent after the first write: [1-9][0-9]*$"
    local held0 response0
    held0=$(grep '^unsent' <<< "$output") response0=$(grep '^response' <<< "$output")
    rm -rf "$STORE"
    for i in 1 2; do
        run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 \
            "$ROOT/tests/bin/corkclient" 127.0.0.1 "$PORT" "$CA" 1.2
        assert_success
        assert_line "$held0"
        assert_line "$response0"
    done
    # the second run resumed: the push after a resumed handshake's first
    # write is where a cork would be broken (the cork of a build without
    # this care let none of the first line wait: 0 unsent)
    assert_equal "$(resumed)" 1
}

@test "PSK credentials given by a function, through each setter: nothing kept from a PSK handshake, nothing offered" {
    local key=0102030405060708090a0b0c0d0e0f10 f
    start_psk --tls12 --psk "$key"
    for f in 1 2 3; do
        : > "$SLOG"
        run gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 \
            --psk-callback "alice:$key" --psk-function "$f" --count 3
        if [ "$f" = 3 ] && [ "$status" = 2 ]; then
            # only where the library has no such setter (it came in 3.8.1)
            assert_output --partial "has no gnutls_psk_set_client_credentials_function3"
            run dpkg --compare-versions "$(pkg-config --modversion gnutls)" lt 3.8.1
            assert_success
            continue
        fi
        assert_success
        assert_equal "$(oks)" 3
        assert_equal "$(grep -c 'psk=alice' "$SLOG")" 3
        assert_equal "$(offers)" 0
    done
}

@test "client certificates: every one of the credentials is in the key, not the first only" {
    local g="$BATS_FILE_TMPDIR/guest" a="$BATS_FILE_TMPDIR/admin" v
    for v in 1.3 1.2; do
        # a server that asks for the admin's CA, and takes no other
        start_psk --tls1${v#1.} --client-ca "$a-ca.pem"
        rm -rf "$STORE"
        run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" \
            --client-cert "$g.pem:$g.key,$a.pem:$a.key" --count 2
        assert_success
        assert_equal "$(grep -c 'client=admin' "$SLOG")" 2
        # the guest's credentials alone are refused, with the shim as without
        : > "$SLOG"
        same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" \
            --client-cert "$g.pem:$g.key" --count 2
        refute_line "conn=0 verify=ok"
        refute_line "conn=1 verify=ok"
        run grep -c 'client=admin' "$SLOG"
        assert_output 0
        assert_equal "$(offers)" 0
        # the same credentials again resume the admin's session
        : > "$SLOG"
        run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls "$v" \
            --client-cert "$g.pem:$g.key,$a.pem:$a.key"
        assert_success
        assert_equal "$(grep -c 'resumed=1 client=admin' "$SLOG")" 1
    done
}

# What a connection earned is published only once data moved after its
# handshake.
@test "a TLS 1.2 connection the program refuses by its own pin, without a byte, publishes nothing" {
    start_psk --tls12
    rm -rf "$STORE"
    # checked by hand and pinned to another certificate: every connection
    # is dropped after its handshake
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 --verify byhand \
        --pin "$OCERT" --count 3
    assert_failure
    : > "$SLOG"
    run gc_stored --connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.2 --verify byhand --count 2
    assert_success
    # the first connection was offered nothing; the second what the first earned
    assert_equal "$(head -1 "$SLOG" | sed 's/.*offered=//')" "-"
    assert_equal "$(resumed)" 1
}

# Time: no session outlives a certificate of the chain, nor its staple.
# GnuTLS refuses session data past its own bounds (a TLS 1.3 ticket's
# lifetime, 6 hours for TLS 1.2 by default), so what expires here expires
# within the hour, and the clock moves on two hours; the server's tickets
# live a day, and so may the client's sessions. libfaketime would move the
# times stat() reports too, and with them the trust file's identity, which
# is in the key (NO_FAKE_STAT: it leaves them).
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
# The plain build: libfaketime hangs beside libasan, shim or not.
gc_later() {
    NO_FAKE_STAT=1 LD_PRELOAD="$faketime_lib" FAKETIME=+2h timeout 120 "$GNUTLSCLIENT" "$@"
}
gc_later_stored() {
    RESUMESHIM_STORE="$STORE" RESUMESHIM_MAX_AGE=86400 NO_FAKE_STAT=1 \
        LD_PRELOAD="$SHIM $faketime_lib" FAKETIME=+2h timeout 120 "$GNUTLSCLIENT" "$@"
}

# later ARGS...: a run now earns sessions through the store (and resumes
# one); a run two hours on reaches the verdicts it reaches without the
# shim, all refusals, and is offered nothing.
later() {
    local v mode
    for v in 1.3 1.2; do
        for mode in inhandshake callback byhand; do
            rm -rf "$STORE"
            : > "$SLOG"
            run env RESUMESHIM_MAX_AGE=86400 RESUMESHIM_STORE="$STORE" LD_PRELOAD="$SHIM" \
                timeout 120 "$GNUTLSCLIENT" --connect "127.0.0.1:$PORT" --tls "$v" \
                --verify "$mode" "$@" --count 2
            assert_success
            assert_equal "$(resumed)" 1
            : > "$SLOG"
            same_verdicts gc_later gc_later_stored --connect "127.0.0.1:$PORT" --tls "$v" \
                --verify "$mode" --errors "$@" --count 2
            refute_line --partial "verify=ok"
            # the last two connections pskserver saw: the run with the shim
            assert_equal "$(grep "^conn=" "$SLOG" | tail -2 | sed 's/.*offered=//' | tr '\n' ' ')" "- - "
        done
    done
}

@test "an intermediate CA that expires before the server's certificate: no session outlives it (faketime)" {
    local d="$BATS_TEST_TMPDIR/chain"
    # the intermediate expires in an hour
    short_chain "$d" int
    CERT="$d/chain.pem" KEY="$d/leaf.key" start_psk --lifetime 86400
    later --cafile "$d/root.pem"
}

# The same credentials changed in place between connections (the program
# adds CRLs, to the credentials or to the trust list it took from them, or
# sets stricter verification flags): the verdicts kept for them before
# (shim/gnutls/vmemo.c) answer none of the later connections, which GnuTLS
# without the shim refuses. A change made through the trust list is one
# the key of the sessions cannot see: the resumed connection is refused
# by its judgment.
@test "verdicts kept: credentials changed in place mid-run (a CRL revoking the server, through the credentials or their trust list; the ULTRA profile): every later connection refused, as without the shim" {
    local v mode what
    start_psk
    for what in crl tlcrl ultra; do
        for v in 1.3 1.2; do
            for mode in inhandshake callback; do
                : > "$SLOG"
                same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafile "$CA" \
                    --crlfile "$CRL" --change "6:$what" --tls "$v" --verify "$mode" --count 10
                assert_line "exit=1"
                assert_line "conn=5 verify=ok"
                assert_line "conn=6 verify=fail"
                assert_line "conn=9 verify=fail"
                # the shim's run (pskserver's 11th to 20th connection)
                # resumed the ones before the change
                [ "$(grep "^conn=" "$SLOG" | tail -10 | grep -c "resumed=1")" -ge 4 ]
            done
        done
    done
}

# A name given as typed data with a size is checked as the string it points
# to (gnutls_x509_trust_list_verify_crt2 reads it NUL-terminated): a client
# that rewrites its name in place, the size left at 9, has "localhostx"
# checked from then on, and every later connection is refused without the
# shim; the verdicts kept for "localhost" (shim/gnutls/vmemo.c) answer none
# of them.
@test "verdicts kept: a name of typed data rewritten in place beyond its size (DNS_HOSTNAME of size 9, set_verify_cert2 or a verify function's own check): every later connection refused, as without the shim" {
    local i v d="$BATS_TEST_TMPDIR/certs"
    # made an hour ago: no certificate's notBefore falls in the second the
    # run begins, which would keep no verdict
    mkdir -p "$d"
    faketime '1 hour ago' bash -c "source '$ROOT/scripts/servers.sh' && make_certs '$d'"
    CERT="$d/server.pem" KEY="$d/server.key" start_psk
    # set_verify_cert2's data are in the session's key, so the session is
    # no longer offered; a verify function's are not, and only the kept
    # verdicts' key tells the names apart
    for v in 1.3 1.2 "1.3 callback" "1.2 callback"; do
        run timeout 60 "$ROOT/tests/bin/sizedname" "$PORT" "$d/ca.pem" 10 6 $v
        assert_failure 1
        assert_line "conn 5 handshake=ok resumed=0"
        for i in 6 7 8 9; do assert_line "conn $i handshake=fail resumed=0"; done
        : > "$SLOG"
        run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/sizedname" "$PORT" "$d/ca.pem" \
            10 6 $v
        assert_failure 1
        assert_line "conn 5 handshake=ok resumed=1"
        for i in 6 7 8 9; do assert_line "conn $i handshake=fail resumed=0"; done
        # the server resumed the shim's connections before the change
        [ "$(grep "^conn=" "$SLOG" | grep -c "resumed=1")" -ge 4 ]
    done
}

# sysconfig_refused MODE LINE: tests/bin/sysconfig (MODE: "" or reinit)
# in TLS 1.3 and 1.2, without and with the shim, its system configuration
# at a path of the test's: the change before connection 6 (LINE says it
# happened) refuses connections 6 to 9 either way; the shim resumed the
# five before it.
sysconfig_refused() {
    local i v shim d="$BATS_TEST_TMPDIR/certs" cfg="$BATS_TEST_TMPDIR/sys.cfg"
    mkdir -p "$d"
    faketime '1 hour ago' bash -c "source '$ROOT/scripts/servers.sh' && make_certs '$d'"
    CERT="$d/server.pem" KEY="$d/server.key" start_psk
    for v in 1.3 1.2; do
        for shim in "" "$PRELOAD"; do
            rm -f "$cfg"
            : > "$SLOG"
            run env LD_PRELOAD="$shim" GNUTLS_SYSTEM_PRIORITY_FILE="$cfg" \
                timeout 60 "$ROOT/tests/bin/sysconfig" "$PORT" "$d/ca.pem" 10 6 "$v" "$cfg" $1
            assert_failure 1
            assert_line "$2"
            assert_line "conn 5 handshake=ok resumed=$([ -n "$shim" ] && echo 1 || echo 0)"
            for i in 6 7 8 9; do assert_line "conn $i handshake=fail resumed=0"; done
        done
        # the server resumed the shim's connections before the change
        [ "$(grep "^conn=" "$SLOG" | grep -c "resumed=1")" -ge 4 ]
    done
}

# GnuTLS reads the system configuration from the path it took when it was
# loaded (GNUTLS_SYSTEM_PRIORITY_FILE then), whatever the environment says
# later: a client that writes a configuration there (the ULTRA profile as
# the minimum), removes the variable and initialises a priority "@EXTRA"
# has every later connection refused without the shim; the verdicts kept
# before (shim/gnutls/judge/vmemo.c) answer none of them.
@test "verdicts kept: the system configuration written at the path GnuTLS took at load, the variable then removed: every later connection refused, as without the shim" {
    sysconfig_refused "" "@EXTRA resolved"
}

# GnuTLS started again (gnutls_global_deinit, then gnutls_global_init)
# loads its system configuration and applies its overrides to its tables
# at once, outside any priority's initialisation, and keeps them after the
# file is removed: with ECDSA-SHA256 insecure for certificates, every later
# connection is refused without the shim; the verdicts kept before answer
# none of them.
@test "verdicts kept: GnuTLS started again over a system configuration that marks the chain's signature insecure, the file removed after: every later connection refused, as without the shim" {
    sysconfig_refused reinit "restarted ok"
    [ ! -e "$BATS_TEST_TMPDIR/sys.cfg" ]
}

# short_chain DIR WHICH: root -> intermediate -> localhost, all made 23
# hours ago, WHICH (root or int) for a day (it expires in an hour), the
# others for days.
short_chain() {
    local d="$1" root_days=10 int_days=1
    [ "$2" = root ] && root_days=1 int_days=3
    mkdir -p "$d"
    faketime '23 hours ago' openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
        -nodes -days "$root_days" -subj /CN=root -keyout "$d/root.key" -out "$d/root.pem" \
        2> /dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=intermediate \
        -keyout "$d/int.key" -out "$d/int.csr" 2> /dev/null
    printf 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n' > "$d/int.ext"
    faketime '23 hours ago' openssl x509 -req -in "$d/int.csr" -CA "$d/root.pem" \
        -CAkey "$d/root.key" -CAcreateserial -days "$int_days" -extfile "$d/int.ext" \
        -out "$d/int.pem" 2> /dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/leaf.key" -out "$d/leaf.csr" 2> /dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$d/leaf.ext"
    faketime '23 hours ago' openssl x509 -req -in "$d/leaf.csr" -CA "$d/int.pem" \
        -CAkey "$d/int.key" -CAcreateserial -days 3 -extfile "$d/leaf.ext" -out "$d/leaf.pem" \
        2> /dev/null
    cat "$d/leaf.pem" "$d/int.pem" > "$d/chain.pem"
}

# A verdict GnuTLS reached is answered again within one process only while
# the clock stays clear of every certificate's validity bounds, the chain's
# and the trust list's (shim/gnutls/vmemo.c): a client whose clock
# (libfaketime) is 3 s short of the notAfter of the intermediate, or of the
# root it trusts (which no session's lifetime knows of: the session is
# offered, and its judgment refuses it), passes six connections, resumed,
# then waits 4 s, and refuses every connection after, as GnuTLS does
# without the shim.
@test "verdicts kept: one process whose clock crosses the intermediate's or the root's notAfter mid-run refuses every connection after it" {
    local d v mode end which
    for which in root int; do
        d="$BATS_TEST_TMPDIR/$which"
        short_chain "$d" "$which"
        end=$(date -d "$(openssl x509 -enddate -noout -in "$d/$which.pem" | cut -d= -f2)" +%s)
        CERT="$d/chain.pem" KEY="$d/leaf.key" start_psk --lifetime 86400
        for v in 1.3 1.2 callback; do
            mode=inhandshake
            [ "$v" = callback ] && v=1.3 mode=callback
            run env NO_FAKE_STAT=1 LD_PRELOAD="$SHIM $faketime_lib" \
                FAKETIME="+$((end - $(date +%s) - 3))" timeout 120 "$GNUTLSCLIENT" \
                --connect "127.0.0.1:$PORT" --cafile "$d/root.pem" --tls "$v" \
                --verify "$mode" --change 6:sleep --count 10
            assert_failure
            assert_line "conn=3 resumed=1 verify=ok"
            assert_line "conn=4 resumed=1 verify=ok"
            assert_line "conn=5 resumed=1 verify=ok"
            assert_line --regexp "^conn=6 resumed=[01] verify=fail$"
            assert_line "conn=9 resumed=0 verify=fail"
        done
    done
}

@test "a stapled OCSP response past its nextUpdate: no session outlives it (faketime)" {
    # past its nextUpdate in an hour; the certificates valid for days
    make_staple "$BATS_FILE_TMPDIR" good staple.der soon
    start_psk --lifetime 86400 --staple "$BATS_FILE_TMPDIR/staple.der"
    later --cafile "$CA"
}

@test "a handshake hook on the server's certificate is a check no resumption runs: no session is offered to it" {
    local d="$BATS_TEST_TMPDIR/other" v
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=other -keyout "$d/other.key" -out "$d/other.pem" 2> /dev/null
    for v in 1.3 1.2; do
        start_psk
        rm -rf "$STORE"
        run gc_stored --connect "127.0.0.1:$PORT" --tls "$v" --cafile "$CA" --count 2
        assert_success
        # The hook pins another certificate: it refuses every handshake,
        # without the shim and with it, and is offered nothing.
        same_verdicts gc gc_stored --connect "127.0.0.1:$PORT" --tls "$v" --cafile "$CA" \
            --hook-pin "$d/other.pem" --count 1
        assert_line --partial "exit=1"
        assert_equal "$(offered_by 4)" "-"
        # Pinning the server's own certificate works, and is offered nothing.
        run gc_stored --connect "127.0.0.1:$PORT" --tls "$v" --cafile "$CA" --hook-pin "$CERT" \
            --count 2
        assert_success
        assert_equal "$(offered_by 5)" "-"
    done
}

@test "a session that enables early data is never offered one (it would leave before the judgment)" {
    local v
    for v in 1.3 1.2; do
        start_psk
        rm -rf "$STORE"
        run gc_stored --connect "127.0.0.1:$PORT" --tls "$v" --cafile "$CA" --count 2
        assert_success
        run gc_stored --connect "127.0.0.1:$PORT" --tls "$v" --cafile "$CA" --early-data --count 2
        assert_success
        assert_equal "$(offered_by 3) $(offered_by 4)" "- -"
    done
}

# delayed_acks CMD...: the delayed ACKs the kernel sent while CMD ran
# against a server of its own, in a network namespace of its own
# (tests/servers/delayedacks), and "fail" after them if CMD failed.
delayed_acks() {
    local as_root=-r
    # Root already (Debian 13's root, a user namespace of its own).
    [ "$(id -u)" != 0 ] || as_root=
    timeout 120 unshare $as_root -n "$ROOT/tests/servers/delayedacks" "$CERT" "$KEY" "$@"
}

@test "TLS 1.3: the ChangeCipherSpec and the Finished, written apart, wait for no delayed ACK under the shim (one a connection without it), full and resumed" {
    local args=(--connect 127.0.0.1:4433 --name localhost --cafile "$CA" --tls 1.3 --count 3)
    # The stall is there without the shim, one a connection as a rule (a
    # loaded machine may now and then send the Finished before the timer
    # would have fired): the test can tell.
    run delayed_acks "$GNUTLSCLIENT" "${args[@]}"
    assert_success
    [ "$output" -ge 1 ]
    run delayed_acks env LD_PRELOAD="$PRELOAD" "$GNUTLSCLIENT" "${args[@]}"
    assert_output 0
    # wget, once per request through the store: a full handshake, then
    # resumed ones.
    local wget=(wget -q -O /dev/null --ca-certificate="$CA" https://localhost:4433/)
    run delayed_acks sh -c 'for i in 1 2 3; do "$@" || exit 1; done' sh "${wget[@]}"
    assert_success
    [ "$output" -ge 1 ]
    run delayed_acks env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" \
        sh -c 'for i in 1 2 3; do "$@" || exit 1; done' sh "${wget[@]}"
    assert_output 0
}

@test "TLS 1.2: the request after a resumed handshake's Finished waits for no delayed ACK under the shim, as none waits without it" {
    local args=(--connect 127.0.0.1:4433 --name localhost --cafile "$CA" --tls 1.2 --count 3)
    run delayed_acks "$GNUTLSCLIENT" "${args[@]}"
    assert_output 0
    # connections 2 and 3 resumed: each would wait once
    run delayed_acks env LD_PRELOAD="$PRELOAD" "$GNUTLSCLIENT" "${args[@]}"
    assert_output 0
}

@test "the flush after the handshake leaves the program's TCP_NODELAY as it was: off where it left it off, on where it set it" {
    start_nginx
    local args=(--connect "127.0.0.1:$PORT" --cafile "$CA" --tls 1.3 --count 3 --show-nodelay)
    run gc_shim "${args[@]}"
    assert_success
    assert_equal "$(grep -c ' verify=ok nodelay=0$' <<< "$output")" 3
    run gc_shim "${args[@]}" --nodelay
    assert_success
    assert_equal "$(grep -c ' verify=ok nodelay=1$' <<< "$output")" 3
    # 2 and 3 resumed: the flush ran on resumed connections too.
    assert_equal "$(nginx_resumed)" 4
}

# start_sni_server GOOD BAD KEY: openssl s_server serving GOOD for a.test
# (and any name but b.test) and BAD for b.test, each with KEY.
start_sni_server() {
    PORT=$(free_port)
    openssl s_server -accept "127.0.0.1:$PORT" -cert "$1" -key "$3" -servername b.test \
        -cert2 "$2" -key2 "$3" -www -quiet > /dev/null 2>&1 &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PORT"
}

# corrupt_signature IN OUT: IN with one bit of its signature flipped: the
# same key, issuer and signed part, so only the signature tells it apart.
corrupt_signature() {
    "$PY" - "$1" "$2" <<'PYEOF'
import base64, sys
pem = open(sys.argv[1]).read().split("-----")[2]
der = bytearray(base64.b64decode("".join(pem.split())))
der[-3] ^= 1
b64 = base64.b64encode(bytes(der)).decode()
open(sys.argv[2], "w").write("-----BEGIN CERTIFICATE-----\n" + "\n".join(
    b64[i:i + 64] for i in range(0, len(b64), 64)) + "\n-----END CERTIFICATE-----\n")
PYEOF
}

# make_rsa_certs DIR [SIGOPTS...]: DIR/ca.pem (RSA 2048) and DIR/server.pem
# with DIR/server.key (RSA 2048), the server's certificate signed with
# SIGOPTS (none: PKCS #1 v1.5; -sigopt rsa_padding_mode:pss: PSS).
make_rsa_certs() {
    local d="$1"
    shift
    mkdir -p "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj /CN=resumeshim-rsa-ca \
        -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign,cRLSign \
        -keyout "$d/ca.key" -out "$d/ca.pem" 2> /dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$d/server.key" \
        -out "$d/server.csr" 2> /dev/null
    printf 'subjectAltName=DNS:localhost,DNS:a.test,DNS:b.test\nauthorityKeyIdentifier=keyid\n' \
        > "$d/ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
        -days 2 -sha256 "$@" -extfile "$d/ext" -out "$d/server.pem" 2> /dev/null
}

# sig_twins CA CERT KEY: in one process, a.test is served CERT and b.test
# CERT with its signature corrupted: verdicts as without the shim (a.test
# passes, b.test fails, every time), and a.test resumed under the shim.
sig_twins() {
    local ca="$1" cert="$2" key="$3" bad="$BATS_TEST_TMPDIR/bad-$RANDOM.pem" v
    corrupt_signature "$cert" "$bad"
    run openssl verify -CAfile "$ca" "$bad"
    assert_failure
    start_sni_server "$cert" "$bad" "$key"
    for v in 1.3 1.2; do
        same_verdicts gc gc_shim --connect "127.0.0.1:$PORT" --cafile "$ca" --tls "$v" \
            --names a.test,b.test --count 8
        assert_equal "$(grep -c ' verify=ok$' <<< "$want")" 4
        assert_equal "$(grep -c ' verify=fail$' <<< "$want")" 4
        run gc_shim --connect "127.0.0.1:$PORT" --cafile "$ca" --tls "$v" --names a.test,b.test \
            --count 8
        assert_equal "$(grep -c '^conn=[0-9]* resumed=1 verify=ok$' <<< "$output")" 3
    done
}

@test "signature checks kept: a certificate whose signature differs by one bit fails, in one process after its good twin passed, resumed or not, as without the shim (ECDSA, RSA PKCS #1, RSA-PSS)" {
    sig_twins "$CA" "$CERT" "$KEY"
    make_rsa_certs "$BATS_TEST_TMPDIR/rsa"
    sig_twins "$BATS_TEST_TMPDIR/rsa/ca.pem" "$BATS_TEST_TMPDIR/rsa/server.pem" \
        "$BATS_TEST_TMPDIR/rsa/server.key"
    make_rsa_certs "$BATS_TEST_TMPDIR/pss" -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32
    run openssl x509 -in "$BATS_TEST_TMPDIR/pss/server.pem" -noout -text
    assert_output --partial 'Signature Algorithm: rsassaPss'
    sig_twins "$BATS_TEST_TMPDIR/pss/ca.pem" "$BATS_TEST_TMPDIR/pss/server.pem" \
        "$BATS_TEST_TMPDIR/pss/server.key"
}

@test "a program that takes each ticket in a handshake hook and runs once per request (glib-networking): every run after the first resumes, however it exits, no ticket offered twice" {
    start_psk --tls13
    local exit i
    for exit in "" --exit-now; do
        rm -rf "$STORE"
        : > "$SLOG"
        for i in $(seq 9); do
            run gc_stored --connect "127.0.0.1:$PORT" --name localhost --cafile "$CA" \
                --take-hook $exit
            assert_success
        done
        assert_equal "${exit:-exit}: $(resumed) of $(connections)" "${exit:-exit}: 8 of 9"
        run offered_twice
        assert_output ""
    done
}
