#!/usr/bin/env bats
# The key chooses, the judge decides. Each test changes what a program
# trusts in a way the key cannot see when the handshake starts (a CA file
# loaded late or rewritten, a CA directory losing its CA, the passing of
# time, CT, DANE, a PSK), after a run that earned sessions. The program
# must then fail exactly as it fails without the shim against the same
# server: the same exit status, the same error printed. Each test runs in
# TLS 1.3 and 1.2; the server's log shows what was offered and resumed.

bats_require_minimum_version 1.5.0
load helpers

RS="$ROOT/scripts/resumeshim"
FAKETIME_SO=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1

setup() {
    D="$BATS_FILE_TMPDIR"
    if [ ! -f "$D/other.pem" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj /CN=other-ca -keyout "$D/other.key" -out "$D/other.pem" 2>/dev/null
    fi
    STORE="$BATS_TEST_TMPDIR/store"
    export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/run"
    mkdir -p -m 700 "$XDG_RUNTIME_DIR"
}

# What a run printed, OpenSSL's error lines reduced to their code, library
# and reason (they also name the thread, and the function, file and line
# that pushed them).
printed() {
    sed -E 's/^[0-9A-F]+:error:([0-9A-F]+):([^:]*):[^:]*:([^:]*):.*/error:\1:\2:\3/' <<< "$output"
}

# like_native CMD...: CMD without the shim, then under it with the store
# $STORE: the same exit status and the same words.
like_native() {
    run bounded "$@"
    local status0=$status out0
    out0=$(printed)
    run shimmed "$@"
    assert_equal "$status" "$status0"
    assert_equal "$(printed)" "$out0"
}

# earn N CMD...: N runs of CMD under the shim with the store, each must work.
earn() {
    local n=$1 i
    shift
    for i in $(seq "$n"); do
        run shimmed "$@"
        assert_success
    done
}

# A command, or a function of this file (which bounds its own time).
bounded() {
    if [ "$(type -t "$1")" = function ]; then "$@"; else timeout 60 "$@"; fi
}
# Under the sanitized build (make test-asan), curl and PHP's curl hang
# beside libasan, shim or not: they get the plain build.
shimmed() {
    local pre=$PRELOAD
    case $1 in curl | php) pre=$SHIM ;; esac
    LD_PRELOAD="$pre" RESUMESHIM_STORE="$STORE" bounded "$@"
}

# Identities offered by connection K (1-based), or "-".
offered_by() { sed -n "s/^conn=$1 .*offered=//p" "$SLOG"; }
# The pskserver's connection K resumed, and then no byte of data came.
resumed_silent() {
    grep -q "^conn=$1 status=ok .*resumed=1" "$SLOG" &&
        grep -q "^data conn=$1 bytes=0$" "$SLOG"
}

versions() { echo --tls13 --tls12; }
curl_version() { [ "$1" = --tls12 ] && echo "--tlsv1.2 --tls-max 1.2" || echo --tlsv1.3; }
# curl turns TLS 1.2 tickets off (SSL_OP_NO_TICKET): nginx's session cache
# resumes its TLS 1.2 sessions.

@test "curl trusting another CA fails as without the shim, though offered a session from the store" {
    start_nginx "ssl_session_cache shared:judge:1m;"
    local v
    for v in $(versions); do
        rm -rf "$STORE"
        : > "$SLOG"
        # shellcheck disable=SC2046
        earn 3 curl -sS $(curl_version $v) --cacert "$CA" "https://localhost:$PORT/"
        assert_equal "$(nginx_resumed)" 2
        # shellcheck disable=SC2046
        like_native curl -sS $(curl_version $v) --cacert "$D/other.pem" "https://localhost:$PORT/"
        assert_equal "$status" 60
        assert_output --partial "unable to get local issuer certificate"
        # The server's sessions went with the refusal: the next run with the
        # right CA is a full handshake again, and it succeeds.
        : > "$SLOG"
        # shellcheck disable=SC2046
        earn 1 curl -sS $(curl_version $v) --cacert "$CA" "https://localhost:$PORT/"
        assert_equal "$(nginx_requests) $(nginx_resumed)" "1 0"
    done
}

@test "curl through resumeshim, its CA file rewritten under the same name, fails as without the shim" {
    start_nginx "ssl_session_cache shared:judge:1m;"
    local v f="$BATS_TEST_TMPDIR/trust.pem"
    for v in $(versions); do
        cp "$CA" "$f"
        : > "$SLOG"
        local i
        for i in 1 2 3; do
            # shellcheck disable=SC2046
            run "$RS" curl -sS $(curl_version $v) --cacert "$f" "https://localhost:$PORT/"
            assert_success
        done
        assert_equal "$(nginx_resumed)" 2
        cp "$D/other.pem" "$f"
        # shellcheck disable=SC2046
        run curl -sS $(curl_version $v) --cacert "$f" "https://localhost:$PORT/"
        local status0=$status out0=$output
        # shellcheck disable=SC2046
        run "$RS" curl -sS $(curl_version $v) --cacert "$f" "https://localhost:$PORT/"
        assert_equal "$status $output" "$status0 $out0"
        assert_equal "$status" 60
        # It was offered a session, and refused it.
        [ "$(nginx_requests)" -eq 3 ]
    done
}

@test "curl run once per request through resumeshim, trusting its CA file, resumes 9 of 10" {
    start_nginx "ssl_session_cache shared:judge:1m;"
    local v i
    for v in $(versions); do
        : > "$SLOG"
        for i in $(seq 10); do
            # shellcheck disable=SC2046
            run "$RS" curl -sS $(curl_version $v) --cacert "$CA" "https://localhost:$PORT/"
            assert_success
            assert_output ok
        done
        assert_equal "$(nginx_requests) $(nginx_resumed)" "10 9"
    done
}

@test "PHP's curl: left alone where its libcurl binds past the preload, resumed where it does not; another CA fails as without the shim" {
    start_nginx "ssl_session_cache shared:judge:1m;"
    local php="$BATS_TEST_TMPDIR/fetch.php"
    cat > "$php" <<'PHP'
<?php
$c = curl_init($argv[1]);
curl_setopt($c, CURLOPT_CAINFO, $argv[2]);
curl_setopt($c, CURLOPT_SSLVERSION, $argv[3] === '1.2'
    ? CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2
    : CURL_SSLVERSION_TLSv1_3 | CURL_SSLVERSION_MAX_TLSv1_3);
curl_setopt($c, CURLOPT_RETURNTRANSFER, true);
$r = curl_exec($c);
if ($r === false) { fwrite(STDERR, "curl error " . curl_errno($c) . ": " . curl_error($c) . "\n"); exit(1); }
echo $r;
PHP
    local deep=0
    php_deepbinds && deep=1
    local v
    for v in 1.3 1.2; do
        rm -rf "$STORE"
        : > "$SLOG"
        earn 4 curl -sS --tlsv$v --tls-max $v --cacert "$CA" "https://localhost:$PORT/"
        assert_equal "$(nginx_resumed)" 3
        # Bound past the preload, PHP's libcurl would match the command's
        # key, but the shim would not see its reads, writes and tickets: it
        # is offered nothing. Reached, it resumes what the command earned.
        earn 1 php "$php" "https://localhost:$PORT/" "$CA" $v
        assert_equal "$(nginx_resumed)" $((4 - deep))
        # Either way, with a CA that does not sign the server it fails as
        # without the shim.
        like_native php "$php" "https://localhost:$PORT/" "$D/other.pem" $v
        assert_failure
        assert_output --partial "curl error 60"
        assert_equal "$(nginx_requests)" 5
    done
}

# ca_dir DIR: a hashed CA directory holding the test CA.
ca_dir() {
    mkdir -p "$1"
    cp "$CA" "$1/ca.pem"
    openssl rehash "$1"
}

@test "a CA directory that lost its CA lets nothing in: through the store, and in one process with fresh contexts" {
    local v dir="$BATS_TEST_TMPDIR/capath"
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE" "$dir"
        ca_dir "$dir"
        earn 2 "$CLIENT" $v --capath "$dir" --n 1 "$PORT"
        rm -f "$dir"/*
        like_native "$CLIENT" $v --capath "$dir" --n 1 "$PORT"
        assert_failure
        assert_output --partial "verify=20 reason=certificate verify failed"
        [ "$(offered_by 4)" != "-" ]
        # One process: the directory empties after its first connection.
        local one=("$CLIENT" $v --capath "$dir" --fresh-ctx --n 3 --after-first "rm -f $dir/*")
        ca_dir "$dir"
        run timeout 60 "${one[@]}" "$PORT"
        local status0=$status out0
        out0=$(printed)
        assert_output --partial "failed=2"
        ca_dir "$dir"
        run shimmed "${one[@]}" "$PORT"
        assert_equal "$status" "$status0"
        assert_equal "$(printed)" "$out0"
        # The shim's second connection (9) was offered one, and the
        # refusal took the server's sessions: its third was offered none.
        [ "$(offered_by 9)" != "-" ]
        assert_equal "$(offered_by 10)" "-"
    done
}

# A chain root -> intermediate -> leaf, the intermediate expiring in ten
# minutes, the root and leaf in days.
make_short_chain() {
    local d="$BATS_FILE_TMPDIR/short"
    [ -f "$d/server.pem" ] && return 0
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 10 \
        -subj /CN=short-root -keyout "$d/root.key" -out "$d/root.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=short-int \
        -keyout "$d/int.key" -out "$d/int.csr" 2>/dev/null
    printf 'basicConstraints=critical,CA:true\nkeyUsage=keyCertSign\n' > "$d/int.ext"
    # Made "two days ago less ten minutes", for two days.
    faketime "$(date -u -d '-2 days +10 minutes' '+%Y-%m-%d %H:%M:%S')" \
        openssl x509 -req -in "$d/int.csr" -CA "$d/root.pem" -CAkey "$d/root.key" \
        -CAcreateserial -days 2 -extfile "$d/int.ext" -out "$d/int.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\n' > "$d/server.ext"
    faketime "$(date -u -d '-1 day' '+%Y-%m-%d %H:%M:%S')" \
        openssl x509 -req -in "$d/server.csr" -CA "$d/int.pem" -CAkey "$d/int.key" \
        -CAcreateserial -days 5 -extfile "$d/server.ext" -out "$d/leaf.pem" 2>/dev/null
    cat "$d/leaf.pem" "$d/int.pem" > "$d/server.pem"
}

@test "an intermediate CA that expired after the session was earned lets nothing in" {
    make_short_chain
    local d="$BATS_FILE_TMPDIR/short" v
    for v in $(versions); do
        CERT="$d/server.pem" KEY="$d/server.key" start_psk $v
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$d/root.pem" --n 1 "$PORT"
        # Twenty minutes on, for the client (the plain build: libfaketime
        # hangs beside libasan).
        run env LD_PRELOAD="$FAKETIME_SO" FAKETIME=+20m timeout 60 \
            "$CLIENT" $v --cafile "$d/root.pem" --n 1 "$PORT"
        local status0=$status out0
        out0=$(printed)
        assert_failure
        assert_output --partial "verify=10 reason=certificate verify failed"
        run env LD_PRELOAD="$SHIM $FAKETIME_SO" FAKETIME=+20m RESUMESHIM_STORE="$STORE" \
            timeout 60 "$CLIENT" $v --cafile "$d/root.pem" --n 1 "$PORT"
        assert_equal "$status" "$status0"
        assert_equal "$(printed)" "$out0"
    done
}

@test "Certificate Transparency (strict, or a refusing callback) is not bypassed by a session earned without it" {
    local v ct
    for v in $(versions); do
        for ct in strict refuse; do
            start_psk $v
            rm -rf "$STORE"
            # Validating SCTs asks for a staple (SSL_CTX_set_ct_validation_callback
            # sets the status type): so did the run that earned the session.
            earn 2 "$CLIENT" $v --cafile "$CA" --ocsp-request --n 1 "$PORT"
            like_native "$CLIENT" $v --cafile "$CA" --ct $ct --n 1 "$PORT"
            assert_failure
            assert_equal "$(offered_by 4)" "-"
        done
    done
}

@test "DANE with a TLSA record the server does not match is not bypassed by a session" {
    local v wrong
    wrong=$(printf '%064d' 0)
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE"
        # SSL_dane_enable names the server (SNI) and the host to check
        # when the program has not: the program did, alike in both runs.
        local named=(--sni localhost --verify-host localhost)
        earn 2 "$CLIENT" $v --cafile "$CA" "${named[@]}" --n 1 "$PORT"
        like_native "$CLIENT" $v --cafile "$CA" "${named[@]}" --dane "$wrong" --n 1 "$PORT"
        assert_failure
        assert_output --partial "verify=65 reason=certificate verify failed"
        # Offered a session and resumed it, the shim's run refused the
        # server before a byte of data.
        [ "$(offered_by 4)" != "-" ]
        resumed_silent 4
    done
}

# psk_fetch ID KEY: a request to s_server -www (port $PSKPORT) through
# openssl s_client's PSK callback; prints what the server's page says of
# the session: its PSK identity, and whether it was reused.
psk_fetch() {
    printf 'GET / HTTP/1.0\r\n\r\n' | timeout 20 openssl s_client -connect "127.0.0.1:$PSKPORT" \
        -tls1_2 -cipher RSA-PSK-AES128-GCM-SHA256 -psk_identity "$1" -psk "$2" -CAfile "$CA" \
        -quiet -ign_eof 2> /dev/null | grep -a 'PSK identity:\|^Reused'
}

@test "a client PSK callback: another identity or key never resumes the first one's session (TLS 1.2 RSA-PSK)" {
    local d="$BATS_FILE_TMPDIR/rsa" key=000102030405060708090a0b0c0d0e0f
    mkdir -p "$d"
    openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$d/server.key" \
        -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$d/ext"
    openssl x509 -req -in "$d/server.csr" -CA "$CA" -CAkey "$D/ca.key" -CAcreateserial \
        -days 2 -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
    PSKPORT=$(free_port)
    openssl s_server -quiet -accept "127.0.0.1:$PSKPORT" -cert "$d/server.pem" \
        -key "$d/server.key" -tls1_2 -cipher RSA-PSK-AES128-GCM-SHA256 -psk_identity alice \
        -psk "$key" -www > /dev/null 2>&1 < /dev/null &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PSKPORT"
    earn 2 psk_fetch alice "$key"
    # The server sees bob, as without the shim: no session of alice's.
    like_native psk_fetch bob "$key"
    assert_success
    assert_output "    PSK identity: bob"
    # Alice with another key fails, as without the shim.
    like_native psk_fetch alice 0f0e0d0c0b0a09080706050403020100
    assert_failure
}

@test "an application's own TLS 1.2 session freed without SSL_shutdown is not resumable, as without the shim" {
    start_psk --tls12
    # The first connection shuts down cleanly; the second resumes its
    # session and is freed without a shutdown, which ends the session.
    run client --tls12 --native-first --no-shutdown-later --n 4 "$PORT"
    assert_output "reused=1 of=4 failed=0 resumable=0"
    run with_shim "$CLIENT" --tls12 --native-first --no-shutdown-later --n 4 "$PORT"
    assert_output "reused=1 of=4 failed=0 resumable=0"
    assert_equal "$(resumed)" 2
}

@test "a verify callback is shown the session's chain on every resumed connection, in one process and through the store" {
    local v
    for v in $(versions); do
        start_psk $v
        run with_shim "$CLIENT" $v --cafile "$CA" --verify-cb --n 4 "$PORT"
        assert_success
        assert_output "reused=3 of=4 failed=0 verified_leaf=4"
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$CA" --verify-cb --n 1 "$PORT"
        assert_output "reused=1 of=1 failed=0 verified_leaf=1"
        assert_equal "$(resumed)" 4
    done
}

@test "without verification, a resumed connection reports the verify result a full handshake would" {
    local v dir="$BATS_TEST_TMPDIR/capath"
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE" "$dir"
        ca_dir "$dir"
        earn 2 "$CLIENT" $v --capath "$dir" --verify-none --n 1 "$PORT"
        assert_output "reused=1 of=1 failed=0 verify_result=0"
        # The directory no longer holds the CA: the connection still works
        # (nothing is enforced), and reports what verification found.
        rm -f "$dir"/*
        run client $v --capath "$dir" --verify-none --n 1 "$PORT"
        assert_output "reused=0 of=1 failed=0 verify_result=20"
        earn 1 "$CLIENT" $v --capath "$dir" --verify-none --n 1 "$PORT"
        assert_output "reused=1 of=1 failed=0 verify_result=20"
    done
}

# clients_ca: a CA of clients, and alice's and bob's certificates, in
# $BATS_FILE_TMPDIR/clients.
clients_ca() {
    local d="$BATS_FILE_TMPDIR/clients" who
    [ -f "$d/bob.pem" ] && return
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=client-ca -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
    for who in alice bob; do
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$who" \
            -keyout "$d/$who.key" -out "$d/$who.csr" 2>/dev/null
        openssl x509 -req -in "$d/$who.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
            -CAcreateserial -days 2 -out "$d/$who.crt" 2>/dev/null
        cat "$d/$who.crt" "$d/$who.key" > "$d/$who.pem"
    done
}

@test "a callback choosing the client's certificate: another identity, or none, never resumes the first one's session" {
    local d="$BATS_FILE_TMPDIR/clients" v
    clients_ca
    for v in $(versions); do
        start_psk $v --client-ca "$d/ca.pem"
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$CA" --cert-cb "$d/alice.pem" --n 1 "$PORT"
        # Bob is bob to the server, as without the shim...
        earn 1 "$CLIENT" $v --cafile "$CA" --cert-cb "$d/bob.pem" --n 1 "$PORT"
        grep -q '^conn=3 status=ok .*client=bob' "$SLOG"
        # ...and a program with no certificate is refused, as without it
        # (TLS 1.3 hears the server's alert when it reads, or an end).
        run client $v --cafile "$CA" --n 1 "$PORT"
        assert_failure
        run shimmed "$CLIENT" $v --cafile "$CA" --n 1 "$PORT"
        assert_failure
        assert_output --partial "reused=0 of=1 failed=1"
        assert_equal "$(offers)" 0
    done
}

@test "the client's private key is its identity too: alice's certificate with another secret behind her public key fails as without the shim" {
    local d="$BATS_FILE_TMPDIR/clients" t="$BATS_TEST_TMPDIR" v pub priv
    clients_ca
    # alice's public point with another key's private scalar: the public
    # halves match, as SSL_CTX_use_PrivateKey checks, the secret does not
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$t/other.key"
    pub=$(openssl ec -in "$d/alice.key" -text -noout 2>/dev/null | sed -n '/^pub:/,/^ASN1/p' |
        grep -v 'pub:\|ASN1' | tr -d ' :\n')
    priv=$(openssl ec -in "$t/other.key" -text -noout 2>/dev/null | sed -n '/^priv:/,/^pub:/p' |
        grep -v 'priv:\|pub:' | tr -d ' :\n')
    printf 'asn1=SEQUENCE:ec\n[ec]\nversion=INT:1\npriv=FORMAT:HEX,OCTETSTRING:%s\n%s\npub=EXPLICIT:1,FORMAT:HEX,BITSTRING:%s\n' \
        "${priv: -64}" 'params=EXPLICIT:0,OID:prime256v1' "$pub" > "$t/bad.cnf"
    openssl asn1parse -genconf "$t/bad.cnf" -out "$t/bad.der" > /dev/null
    openssl ec -inform DER -in "$t/bad.der" -out "$t/bad.key" 2>/dev/null
    cmp <(openssl pkey -in "$t/bad.key" -pubout) <(openssl x509 -in "$d/alice.crt" -pubkey -noout)
    cat "$d/alice.crt" "$t/bad.key" > "$t/bad.pem"
    for v in $(versions); do
        start_psk $v --client-ca "$d/ca.pem"
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$CA" --client-cert "$d/alice.pem" --n 1 "$PORT"
        grep -q "^conn=2 status=ok .*resumed=1" "$SLOG"
        run client $v --cafile "$CA" --client-cert "$t/bad.pem" --n 1 "$PORT"
        assert_failure
        run shimmed "$CLIENT" $v --cafile "$CA" --client-cert "$t/bad.pem" --n 1 "$PORT"
        assert_failure
        assert_output --partial "reused=0 of=1 failed=1"
        assert_equal "$(grep -c 'status=ok' "$SLOG")" 2
        [ "$(offered_by 4)" = - ]
    done
}

@test "a certificate the program makes its own during the handshake: the session is not kept under the identity it began with" {
    local d="$BATS_FILE_TMPDIR/clients" v
    clients_ca
    for v in $(versions); do
        start_psk $v --client-ca "$d/ca.pem"
        rm -rf "$STORE"
        # configured as alice, its verify callback makes bob its own: bob
        # is who the server sees, and nothing is kept for alice
        earn 2 "$CLIENT" $v --cafile "$CA" --client-cert "$d/alice.pem" --verify-cb \
            --swap-cert "$d/bob.pem" --n 1 "$PORT"
        assert_equal "$(client_of 1) $(client_of 2)" "bob bob"
        # alice, no swap: alice, as without the shim
        run shimmed "$CLIENT" $v --cafile "$CA" --client-cert "$d/alice.pem" --n 1 "$PORT"
        assert_success
        assert_equal "$(client_of 3)" alice
        assert_equal "$(offers)" 0
    done
}

@test "a current slot with a certificate and no key (Tcl's tls package) resumes as a client with none; beside a complete slot it is offered nothing and stays current" {
    local d="$BATS_FILE_TMPDIR/clients" v out0 i
    clients_ca
    rsa_client
    for v in $(versions); do
        # alone: the client sends no certificate, with or without the shim
        start_psk $v
        run timeout 60 "$ROOT/tests/bin/halfslot" "$PORT" 3 "$d/alice.crt"
        assert_success
        assert_equal "$(grep -c '^ok=1 reused=0 current=half$' <<< "$output")" 3
        : > "$SLOG"
        run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/halfslot" "$PORT" 3 "$d/alice.crt"
        assert_success
        assert_equal "$(grep -c 'current=half$' <<< "$output") $(resumed)" "3 2"
        # beside carol's complete RSA slot, to a server that asks for one
        start_psk $v --client-ca "$d/ca.pem"
        run timeout 60 "$ROOT/tests/bin/halfslot" "$PORT" 3 "$d/alice.crt" "$d/carol.crt" "$d/carol.key"
        out0=$output
        local seen0
        seen0=$(for i in 1 2 3; do client_of "$i"; done)
        run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/halfslot" "$PORT" 3 "$d/alice.crt" \
            "$d/carol.crt" "$d/carol.key"
        assert_equal "$output" "$out0"
        assert_equal "$(for i in 4 5 6; do client_of "$i"; done)" "$seen0"
        assert_equal "$(offers)" 0
    done
}

# carol: an RSA certificate of the clients' CA, beside alice's and bob's
# ECDSA ones (clients_ca first).
rsa_client() {
    local d="$BATS_FILE_TMPDIR/clients"
    [ -f "$d/carol.pem" ] && return
    openssl req -newkey rsa:2048 -nodes -subj /CN=carol -keyout "$d/carol.key" \
        -out "$d/carol.csr" 2>/dev/null
    openssl x509 -req -in "$d/carol.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
        -days 2 -out "$d/carol.crt" 2>/dev/null
    cat "$d/carol.crt" "$d/carol.key" > "$d/carol.pem"
}

@test "every certificate slot is the client's identity: a session earned with one never stands for a program that no longer has it, or would send another" {
    local d="$BATS_FILE_TMPDIR/clients" v pair want
    clients_ca
    rsa_client
    # Slots load in turn, the last current. In TLS 1.3 OpenSSL sends the
    # slot the server's signature algorithms take first (here alice's
    # ECDSA), whichever is current; in TLS 1.2 the current one.
    for v in $(versions); do
        start_psk $v --client-ca "$d/ca.pem"
        run client $v --cafile "$CA" --client-cert "$d/alice.pem,$d/carol.pem" --n 1 "$PORT"
        if [ "$v" = --tls13 ]; then
            assert_equal "$(client_of "$(connections)")" alice
        else
            assert_equal "$(client_of "$(connections)")" carol
        fi
        for pair in "alice.pem,carol.pem carol.pem" "carol.pem alice.pem,carol.pem" \
            "alice.pem,carol.pem alice.pem,bob.pem,carol.pem"; do
            set -- $pair
            local earned="$d/${1//,/,$d/}" now="$d/${2//,/,$d/}"
            run client $v --cafile "$CA" --client-cert "$now" --n 1 "$PORT"
            want=$(client_of "$(connections)")
            [ "$want" != fail ]
            rm -rf "$STORE"
            earn 2 "$CLIENT" $v --cafile "$CA" --client-cert "$earned" --n 1 "$PORT"
            grep -q "^conn=$(connections) status=ok .*resumed=1" "$SLOG"
            run shimmed "$CLIENT" $v --cafile "$CA" --client-cert "$now" --n 1 "$PORT"
            assert_success
            echo "$v earned with $1, now $2: the server saw $(client_of "$(connections)"), without the shim $want"
            assert_equal "$(client_of "$(connections)")" "$want"
        done
        # The same slots, the client's signature algorithms RSA's only (a
        # server with an RSA certificate): TLS 1.3 sends carol's.
        local slots="$d/alice.pem,$d/carol.pem" algs=rsa_pss_rsae_sha256:rsa_pkcs1_sha256
        local t="$BATS_TEST_TMPDIR"
        [ -f "$t/rsa.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost \
            -days 1 -keyout "$t/rsa.key" -out "$t/rsa.pem" 2>/dev/null
        start_psk $v --client-ca "$d/ca.pem" --cert "$t/rsa.pem" --key "$t/rsa.key"
        run client $v --cafile "$t/rsa.pem" --client-cert "$slots" --sigalgs "$algs" --n 1 "$PORT"
        want=$(client_of "$(connections)")
        assert_equal "$want" carol
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$t/rsa.pem" --client-cert "$slots" --n 1 "$PORT"
        [ "$v" = --tls12 ] || [ "$(client_of "$(connections)")" = alice ]
        run shimmed "$CLIENT" $v --cafile "$t/rsa.pem" --client-cert "$slots" --sigalgs "$algs" \
            --n 1 "$PORT"
        assert_success
        assert_equal "$(client_of "$(connections)")" "$want"
    done
}

@test "SRP: a wrong password fails as without the shim, after runs that earned sessions with the right one" {
    local srp="$ROOT/tests/bin/srpclient" d="$BATS_TEST_TMPDIR"
    # An RSA certificate: the server signs its SRP parameters (SRP-RSA
    # suites), and the client keeps sessions only of servers it has seen.
    openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
        -keyout "$d/rsa.key" -out "$d/rsa.pem" 2>/dev/null
    start_psk --srp alice:right --cert "$d/rsa.pem" --key "$d/rsa.key"
    rm -rf "$STORE"
    run "$srp" "$PORT" alice wrong
    assert_failure
    earn 2 "$srp" "$PORT" alice right
    run shimmed "$srp" "$PORT" alice wrong
    assert_failure
    assert_output "ok=0 reused=-1"
    # No session was offered, none resumed: the user proves the password
    # in every handshake.
    assert_equal "$(offers)" 0
    assert_equal "$(grep -c 'resumed=1' "$SLOG")" 0
    assert_equal "$(grep -c '^conn=.* status=ok .* srp=alice' "$SLOG")" 2
    # The right password resumes no session either.
    run shimmed "$srp" "$PORT" alice right
    assert_success
    assert_equal "$(offers)" 0
}

# The server's view of connection K: its client, or "fail".
client_of() {
    local line
    line=$(grep "^conn=$1 " "$SLOG")
    case $line in *status=ok*) sed -n 's/.* client=\([^ ]*\).*/\1/p' <<< "$line" ;; *) echo fail ;; esac
}

@test "a client-certificate engine: its sessions are never offered, and a program with neither it nor a certificate is refused as without the shim" {
    local d="$BATS_FILE_TMPDIR/clients" pc="$ROOT/tests/bin/policyclient" v
    clients_ca
    export CCENGINE_PEM="$d/alice.pem"
    for v in $(versions); do
        start_psk $v --client-ca "$d/ca.pem"
        rm -rf "$STORE"
        # libssl asks the engine when the server asks for a certificate:
        # the server sees alice both times, each in a full handshake.
        earn 2 "$pc" $v "$PORT" "$CA" engine "$ROOT/tests/bin/ccengine.so"
        assert_equal "$(client_of 1) $(client_of 2)" "alice alice"
        run timeout 60 "$pc" $v "$PORT" "$CA" plain
        assert_failure
        run shimmed "$pc" $v "$PORT" "$CA" plain
        assert_failure
        assert_output "ok=0 reused=-1"
        assert_equal "$(client_of 4)" fail
        assert_equal "$(offers)" 0
        assert_equal "$(resumed)" 0
    done
}

@test "a security callback of the program's own is offered no session: what it refuses fails as without the shim, what it allows succeeds in a full handshake" {
    local d="$BATS_FILE_TMPDIR/clients" pc="$ROOT/tests/bin/policyclient" v op
    clients_ca
    for v in $(versions); do
        for op in own sigalg; do
            start_psk $v --client-ca "$d/ca.pem"
            rm -rf "$STORE"
            # OpenSSL's own callback: the second run resumes the first's
            # session.
            earn 2 "$pc" $v "$PORT" "$CA" seccb openssl "$d/alice.pem"
            grep -q '^conn=2 status=ok .*resumed=1 client=alice' "$SLOG"
            run timeout 60 "$pc" $v "$PORT" "$CA" seccb $op "$d/alice.pem"
            assert_failure
            run shimmed "$pc" $v "$PORT" "$CA" seccb $op "$d/alice.pem"
            assert_failure
            assert_output "ok=0 reused=-1"
            assert_equal "$v $op: $(offered_by 4)" "$v $op: -"
            assert_equal "$(client_of 4)" fail
            # One that refuses nothing: a full handshake, nothing offered.
            run shimmed "$pc" $v "$PORT" "$CA" seccb none "$d/alice.pem"
            assert_success
            assert_output "ok=1 reused=0"
            assert_equal "$(offered_by 5)" -
        done
    done
}

@test "a certificate callback is watched: its sessions resume where it never ran, and one not in force is never mistaken for it" {
    clients_ca
    local d="$BATS_FILE_TMPDIR/clients" cc="$ROOT/tests/bin/certcbclient" mode how
    # no certificate asked for: the callback never runs, and the second
    # connection resumes the first's session (without the shim it has none)
    start_psk --tls13
    run "$cc" watched "$PORT" "$CA" "$d/alice.pem" "$d/bob.pem"
    assert_line "second: ok=1 reused=0"
    run env LD_PRELOAD="$PRELOAD" "$cc" watched "$PORT" "$CA" "$d/alice.pem" "$d/bob.pem"
    assert_line "second: ok=1 reused=1"
    # a certificate asked for: whatever callback is in force on each
    # connection, the server sees the client it sees without the shim, and a
    # refusing callback fails the second connection as without it
    for mode in watched late clearssl setctx setnull clearctx; do
        for how in "" refuse; do
            start_psk --tls13 --client-ca "$d/ca.pem"
            run "$cc" $mode "$PORT" "$CA" "$d/alice.pem" "$d/bob.pem" $how
            local rc0=$status c1 c2
            c1=$(client_of 1) c2=$(client_of 2)
            run env LD_PRELOAD="$PRELOAD" "$cc" $mode "$PORT" "$CA" "$d/alice.pem" "$d/bob.pem" $how
            assert_equal "$mode $how: exit $status" "$mode $how: exit $rc0"
            assert_equal "$mode $how: $(client_of 3) $(client_of 4)" "$mode $how: $c1 $c2"
        done
    done
}

@test "a handshake that ends inside an SSL BIO's write is judged before the data, and BIO reads count as use" {
    local v dir="$BATS_TEST_TMPDIR/capath"
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE" "$dir"
        ca_dir "$dir"
        # Only BIO_write and BIO_read, as Tcl's tls package: the sessions
        # are published, and resumed.
        earn 2 "$CLIENT" $v --capath "$dir" --mode bio-io --n 1 "$PORT"
        assert_equal "$(resumed)" 1
        rm -f "$dir"/*
        like_native "$CLIENT" $v --capath "$dir" --mode bio-io --n 1 "$PORT"
        assert_failure
        assert_output --partial "verify=20 reason=certificate verify failed"
        [ "$(offered_by 4)" != "-" ]
        resumed_silent 4
    done
}

@test "a handshake that ends inside SSL_write_ex2 (OpenSSL 3.3 and later) is judged before the data" {
    local v dir="$BATS_TEST_TMPDIR/capath"
    run "$CLIENT" --mode write2 1
    if [ "$status" = 2 ]; then
        # only where the library has no SSL_write_ex2
        assert_output --partial "no SSL_write_ex2"
        run dpkg --compare-versions "$(openssl version | cut -d' ' -f2)" lt 3.3
        assert_success
        return
    fi
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE" "$dir"
        ca_dir "$dir"
        earn 2 "$CLIENT" $v --capath "$dir" --mode write2 --n 1 "$PORT"
        assert_equal "$(resumed)" 1
        rm -f "$dir"/*
        like_native "$CLIENT" $v --capath "$dir" --mode write2 --n 1 "$PORT"
        assert_failure
        assert_output --partial "verify=20 reason=certificate verify failed"
        [ "$(offered_by 4)" != "-" ]
        resumed_silent 4
    done
}

@test "a verify callback that suspends the handshake (SSL_set_retry_verify) is asked again on a resumed connection" {
    local v
    for v in $(versions); do
        start_psk $v
        rm -rf "$STORE"
        earn 2 "$CLIENT" $v --cafile "$CA" --retry-verify accept --n 1 "$PORT"
        assert_output "reused=1 of=1 failed=0"
        like_native "$CLIENT" $v --cafile "$CA" --retry-verify refuse --n 1 "$PORT"
        assert_failure
        assert_output --partial "reason=certificate verify failed"
        [ "$(offered_by 4)" != "-" ]
        resumed_silent 4
    done
}

# A root CA, in the client's CA file only, that ends ten minutes from now,
# and a leaf it signed that lasts days: the chain the server sends never
# expires, so only the judgment of a resumed connection sees the root end.
make_short_root() {
    local d="$BATS_FILE_TMPDIR/shortroot"
    [ -f "$d/server.pem" ] && return 0
    mkdir -p "$d"
    printf 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign\n' > "$d/ca.ext"
    faketime "$(date -u -d '-2 days +10 minutes' '+%Y-%m-%d %H:%M:%S')" \
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=short-root -keyout "$d/root.key" -out "$d/root.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$d/server.ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/root.pem" -CAkey "$d/root.key" \
        -CAcreateserial -days 5 -extfile "$d/server.ext" -out "$d/server.pem" 2>/dev/null
}

@test "a root CA that expires between two connections of one process lets nothing in on the second" {
    make_short_root
    local d="$BATS_FILE_TMPDIR/shortroot" clock="$BATS_TEST_TMPDIR/clock" v pre status0 out0
    # The client's clock moves twenty minutes on after its first connection
    # (libfaketime reads the file again at every call); the root ends in ten.
    for v in $(versions); do
        for pre in "" "$SHIM"; do
            CERT="$d/server.pem" KEY="$d/server.key" start_psk $v
            echo +0 > "$clock"
            run env LD_PRELOAD="$pre $FAKETIME_SO" FAKETIME_TIMESTAMP_FILE="$clock" \
                FAKETIME_NO_CACHE=1 timeout 60 "$CLIENT" $v --cafile "$d/root.pem" --n 3 \
                --after-first "echo +20m > $clock" "$PORT"
            if [ -z "$pre" ]; then
                status0=$status
                out0=$(printed)
                assert_failure
                assert_output --partial "verify=10 reason=certificate verify failed"
                assert_output --partial "reused=0 of=3 failed=2"
            else
                assert_equal "$status" "$status0"
                assert_equal "$(printed)" "$out0"
                # Offered, and refused by the judge once the server had
                # resumed it: not a byte of data.
                [ "$(offered_by 2)" != "-" ]
                resumed_silent 2
                ! grep -q "^data conn=3 bytes=[1-9]" "$SLOG"
            fi
        done
    done
}

@test "a verify time set after the first connection, past the leaf's end or before its start, refuses the later ones of one process as without the shim" {
    local v t now status0 out0
    now=$(date +%s)
    for v in $(versions); do
        # Two and a half days on (the leaf lasts two, its CA three), a day back.
        for t in $((now + 216000)) $((now - 86400)); do
            start_psk $v
            run timeout 60 "$CLIENT" $v --cafile "$CA" --n 3 --check-time-after "$t" "$PORT"
            status0=$status
            out0=$(printed)
            assert_failure
            assert_output --partial "failed=2"
            start_psk $v
            run with_shim "$CLIENT" $v --cafile "$CA" --n 3 --check-time-after "$t" "$PORT"
            assert_equal "$status" "$status0"
            assert_equal "$(printed)" "$out0"
            assert_equal "$(resumed)" 0
        done
        # A moment inside the validity times: resumed, as before.
        start_psk $v
        run with_shim "$CLIENT" $v --cafile "$CA" --n 3 --check-time-after $((now + 3600)) "$PORT"
        assert_success
        # (the verify time is part of the key: the first session is not
        # offered after it changed, the second's is)
        assert_output "reused=1 of=3 failed=0"
    done
}

@test "the validity-time memo answers as libcrypto's X509_cmp_time, time by time, in a zone with leap seconds too" {
    local tz
    # right/UTC: OpenSSL reads the moment through gmtime, which counts
    # the zone's leap seconds (27 in 2026)
    for tz in UTC right/UTC right/Europe/Berlin; do
        [ -f "/usr/share/zoneinfo/$tz" ]
        run env TZ="$tz" "$ROOT/tests/bin/vtimecheck"
        assert_success
        assert_output --regexp "^compared=[0-9]{6,} differed=0$"
    done
}

@test "signature checks kept: a certificate object's to-be-signed encoding is what X509_verify checks, decoded, set, encoded again and signed again (the cache's key)" {
    run "$ROOT/tests/bin/sigkeycheck"
    assert_success
    assert_output "same"
}

@test "key facts kept only in the judge's verifications: a verify callback's questions to keys freed and made again answered as libcrypto answers them, and a connection's own key share freed with it" {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$D/named.pem" 2>/dev/null
    openssl ecparam -name prime256v1 -param_enc explicit -genkey -noout \
        -out "$D/explicit.pem" 2>/dev/null
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$D/rsa.pem" 2>/dev/null
    start_psk --tls13
    local files=("$D/named.pem" "$D/explicit.pem" "$D/rsa.pem")
    run "$ROOT/tests/bin/keyfactcheck" "$PORT" "$CA" "${files[@]}"
    assert_success
    assert_output "asked=600 differed=0 freed=1"
    run with_shim "$ROOT/tests/bin/keyfactcheck" "$PORT" "$CA" "${files[@]}"
    assert_success
    assert_output "asked=600 differed=0 freed=1"
}

@test "key facts: a key a lookup method or a purpose check of the program's own makes and asks about inside a judged verification is freed when the program frees it" {
    start_psk --tls13
    run "$ROOT/tests/bin/lookupkey" "$PORT" "$CA" 3
    assert_success
    assert_output "made=3 freed=3 resumed=0"
    run with_shim "$ROOT/tests/bin/lookupkey" "$PORT" "$CA" 3
    assert_success
    assert_output "made=3 freed=3 resumed=2"
    # the purpose is checked on each certificate of the chain, as many
    # times in a judged verification as in a full one
    run "$ROOT/tests/bin/lookupkey" "$PORT" "$CA" 3 purpose
    assert_success
    local made=${output#made=}
    made=${made%% *}
    [ "$made" -ge 3 ]
    assert_output "made=$made freed=$made resumed=0"
    run with_shim "$ROOT/tests/bin/lookupkey" "$PORT" "$CA" 3 purpose
    assert_success
    assert_output "made=$made freed=$made resumed=2"
}

# make_leaf NAME HOST: $D/NAME.pem and $D/NAME.key, a new key certified by
# the test CA for HOST alone.
make_leaf() {
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
        -keyout "$D/$1.key" -out "$D/$1.csr" 2>/dev/null
    printf 'subjectAltName=DNS:%s\n' "$2" > "$D/$1.ext"
    openssl x509 -req -in "$D/$1.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" -CAcreateserial \
        -days 2 -extfile "$D/$1.ext" -out "$D/$1.pem" 2>/dev/null
}
# The pin curl takes for the key certified in PEM file $1.
pin_of() {
    echo "sha256//$(openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der |
        openssl dgst -sha256 -binary | base64)"
}
# stop_last_server: the server started last stops, and its port is free.
stop_last_server() {
    local pid
    pid=$(tail -1 "$BATS_TEST_TMPDIR/pids")
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}

@test "curl pinning the new key of a server whose certificate was renewed while its tickets live: one run fails at most" {
    make_leaf renewed localhost
    start_psk --tls13 --ticket-keys renewal
    local port=$PORT i failed=0
    for i in 1 2 3; do
        run "$RS" curl -sS --tlsv1.3 --cacert "$CA" "https://localhost:$port/"
        assert_success
    done
    assert_equal "$(connections) $(resumed)" "3 2"
    stop_last_server
    CERT="$D/renewed.pem" KEY="$D/renewed.key" start_psk --tls13 --ticket-keys renewal --port "$port"
    run curl -sS --tlsv1.3 --cacert "$CA" --pinnedpubkey "$(pin_of "$D/renewed.pem")" \
        "https://localhost:$port/"
    assert_success
    : > "$SLOG"
    for i in 1 2 3 4 5; do
        run "$RS" curl -sS --tlsv1.3 --cacert "$CA" --pinnedpubkey "$(pin_of "$D/renewed.pem")" \
            "https://localhost:$port/"
        [ "$status" -eq 0 ] || failed=$((failed + 1))
    done
    # The first run resumed a session of the old certificate and failed;
    # the second was a full handshake; the rest resumed its sessions.
    assert_equal "$failed" 1
    assert_equal "$(sed -n 's/^conn=\([0-9]*\) .*resumed=\([01]\).*/\2/p' "$SLOG" | tr -d '\n')" 10111
}

# curl moves its bytes through a BIO of its own, under which OpenSSL sees
# no socket: its sessions still go by the port they were earned on.
@test "curl: a session earned on one port of a name is never offered to another port, though its server would take it" {
    make_leaf elsewhere other.test
    start_psk --tls13 --ticket-keys shared
    local first=$PORT first_log=$SLOG i
    CERT="$D/elsewhere.pem" KEY="$D/elsewhere.key" start_psk --tls13 --ticket-keys shared
    for i in 1 2; do
        run "$RS" curl -sS --tlsv1.3 --cacert "$CA" "https://localhost:$first/"
        assert_success
    done
    assert_equal "$(SLOG=$first_log resumed)" 1
    run curl -sS --tlsv1.3 --cacert "$CA" "https://localhost:$PORT/"
    assert_equal "$status" 60
    run "$RS" curl -sS --tlsv1.3 --cacert "$CA" "https://localhost:$PORT/"
    assert_equal "$status" 60
    # The second server was offered nothing.
    assert_equal "$(offers) $(resumed)" "0 0"
    # The first still resumes.
    run "$RS" curl -sS --tlsv1.3 --cacert "$CA" "https://localhost:$first/"
    assert_success
    assert_equal "$(SLOG=$first_log resumed)" 2
}

# start_twins KEYS: two servers that take each other's tickets (ticket keys
# KEYS), on ports $good and $bad; the second's certificate is one the
# client does not trust.
start_twins() {
    local t="$BATS_TEST_TMPDIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$t/bad.key" \
        -out "$t/bad.pem" -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null
    start_psk --tls13 --ticket-keys "$1"
    good=$PORT
    start_psk --tls13 --ticket-keys "$1" --cert "$t/bad.pem" --key "$t/bad.key"
    bad=$PORT
}

@test "through an HTTP proxy (the socket is the proxy's), a session earned on one port of a name is never offered to another: urllib and wget fail as without the shim" {
    local t="$BATS_TEST_TMPDIR" good bad pp i
    start_twins proxied
    "$PY" "$ROOT/tests/servers/connectproxy.py" "$t/pp" 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    for i in $(seq 100); do [ -s "$t/pp" ] && break; sleep 0.05; done
    pp=$(cat "$t/pp")
    cat > "$t/fetch.py" <<PY
import sys, ssl, urllib.request
ctx = ssl.create_default_context(cafile="$CA")
o = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx),
    urllib.request.ProxyHandler({"https": "http://127.0.0.1:$pp"}))
try:
    print("ok", o.open("https://localhost:%s/" % sys.argv[1], timeout=20).status)
except Exception as e:
    print("fail"); sys.exit(1)
PY
    run timeout 60 "$PY" "$t/fetch.py" "$bad"
    assert_failure
    rm -rf "$STORE"
    run shimmed "$PY" "$t/fetch.py" "$good"
    assert_success
    run shimmed "$PY" "$t/fetch.py" "$bad"
    assert_failure
    assert_output fail
    # wget (GnuTLS): its transport is the proxy's socket too
    local w=(wget -q -O /dev/null --ca-certificate="$CA" -e use_proxy=on
        -e "https_proxy=http://127.0.0.1:$pp")
    rm -rf "$STORE"
    run shimmed "${w[@]}" "https://localhost:$good/"
    assert_success
    run shimmed "${w[@]}" "https://localhost:$bad/"
    assert_equal "$status" 5
    # nothing was offered to the second server
    [ -z "$(sed -n 's/.*offered=//p' "$SLOG" | grep -v '^-$')" ]
}

# unix_relay DIR PATH PORT: a relay from the Unix-domain socket PATH, bound
# in DIR, to 127.0.0.1:PORT.
unix_relay() {
    (cd "$1" && exec socat "UNIX-LISTEN:$2,fork" "TCP:127.0.0.1:$3" 3>&-) &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
}

# unix_fetch FILE [peer]: writes a Python client that fetches a page through
# the Unix-domain socket it is given, trusting $CA, and prints "ok" and
# whether the session was resumed, or "fail"; with peer, the socket's peer
# name first.
unix_fetch() {
    cat > "$1" <<PY
import socket, ssl, sys
ctx = ssl.create_default_context(cafile="$CA")
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
if "${2:-}":
    print(s.getpeername())
try:
    c = ctx.wrap_socket(s, server_hostname="localhost")
    c.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
    while c.recv(4096):
        pass
    print("ok", c.session_reused)
except Exception:
    print("fail"); sys.exit(1)
PY
}

# Two Unix-domain paths are two servers, though they answer to one name.
@test "a session earned through one Unix-domain path is never offered through another under the same name" {
    local t="$BATS_TEST_TMPDIR" good bad i
    # each behind a path of its own
    start_twins paths
    unix_relay "$t" "$t/good.sock" "$good"
    unix_relay "$t" "$t/bad.sock" "$bad"
    for i in $(seq 100); do [ -S "$t/good.sock" ] && [ -S "$t/bad.sock" ] && break; sleep 0.05; done
    unix_fetch "$t/fetch.py"
    run timeout 60 "$PY" "$t/fetch.py" "$t/bad.sock"
    assert_failure
    rm -rf "$STORE"
    for i in 1 2; do
        run shimmed "$PY" "$t/fetch.py" "$t/good.sock"
        assert_success
    done
    assert_output "ok True"
    run shimmed "$PY" "$t/fetch.py" "$t/bad.sock"
    assert_failure
    assert_output fail
    # nothing was offered to the second server
    [ -z "$(sed -n 's/.*offered=//p' "$SLOG" | grep -v '^-$')" ]
}

# A relative path names a file only from the directory its server was in:
# two servers that bound the same relative path in two directories show the
# client one peer name.
@test "a session earned through a relative Unix-domain path is never offered through another bound the same way" {
    local t="$BATS_TEST_TMPDIR" good bad i
    start_twins relpaths
    mkdir "$t/good" "$t/bad"
    unix_relay "$t/good" s.sock "$good"
    unix_relay "$t/bad" s.sock "$bad"
    for i in $(seq 100); do [ -S "$t/good/s.sock" ] && [ -S "$t/bad/s.sock" ] && break; sleep 0.05; done
    unix_fetch "$t/fetch.py" peer
    run timeout 60 "$PY" "$t/fetch.py" "$t/bad/s.sock"
    assert_failure
    rm -rf "$STORE"
    for i in 1 2; do
        run shimmed "$PY" "$t/fetch.py" "$t/good/s.sock"
        assert_success
        assert_line s.sock
    done
    run shimmed "$PY" "$t/fetch.py" "$t/bad/s.sock"
    assert_failure
    assert_line fail
    # nothing was offered to the second server
    [ -z "$(sed -n 's/.*offered=//p' "$SLOG" | grep -v '^-$')" ]
}

# A pinning Python program checks the server's key after the handshake and
# closes the socket unused: the SSL is freed, never shut down.
@test "Python pinning the new key of a renewed server, TLS 1.3 and 1.2: one run fails at most" {
    make_leaf renewed localhost
    cat > "$BATS_TEST_TMPDIR/pin.py" <<'PY'
import hashlib, socket, ssl, sys
port, ca, pin, v = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
ctx.maximum_version = ssl.TLSVersion.TLSv1_2 if v == "1.2" else ssl.TLSVersion.TLSv1_3
s = ctx.wrap_socket(socket.create_connection(("localhost", port)), server_hostname="localhost")
if hashlib.sha256(s.getpeercert(True)).hexdigest() != pin:
    s.close()
    sys.exit("pin mismatch")
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode())
PY
    local v port i failed
    local pin
    pin=$(openssl x509 -in "$D/renewed.pem" -outform der | openssl dgst -sha256 -r | cut -d' ' -f1)
    for v in 1.3 1.2; do
        rm -rf "$STORE"
        start_psk --tls${v/./} --ticket-keys "renewal$v"
        port=$PORT
        for i in 1 2 3; do
            run shimmed "$PY" -c "import socket, ssl, sys
ctx = ssl.create_default_context(cafile='$CA')
ctx.maximum_version = ssl.TLSVersion.TLSv1_2 if '$v' == '1.2' else ssl.TLSVersion.TLSv1_3
s = ctx.wrap_socket(socket.create_connection(('localhost', $port)), server_hostname='localhost')
s.sendall(b'GET / HTTP/1.0\r\n\r\n'); s.recv(100)"
            assert_success
        done
        assert_equal "$(connections) $(resumed)" "3 2"
        stop_last_server
        CERT="$D/renewed.pem" KEY="$D/renewed.key" start_psk --tls${v/./} --ticket-keys "renewal$v" \
            --port "$port"
        run "$PY" "$BATS_TEST_TMPDIR/pin.py" "$port" "$CA" "$pin" "$v"
        assert_output "HTTP/1.0 200 OK"
        failed=0
        for i in 1 2 3 4 5; do
            run shimmed "$PY" "$BATS_TEST_TMPDIR/pin.py" "$port" "$CA" "$pin" "$v"
            [ "$status" -eq 0 ] || failed=$((failed + 1))
        done
        assert_equal "$failed" 1
        assert_equal "$(sed -n 's/^conn=\([0-9]*\) .*resumed=\([01]\).*/\2/p' "$SLOG" | tr -d '\n')" 010111
    done
}

@test "a purpose check of the program's own that reads the zone again (localtime after setenv TZ) inside a verification: the resumed connection fails as the full handshake does" {
    local v end status0 out0
    [ -f /usr/share/zoneinfo/right/UTC ]
    end=$(date -u -d "$(openssl x509 -in "$CERT" -noout -enddate | cut -d= -f2)" +%s)
    # Verified as at ten seconds past the leaf's end: in right/UTC (27 leap
    # seconds) the moment's calendar is 17 seconds before it, in UTC after.
    for v in $(versions); do
        start_psk $v
        run env TZ=right/UTC timeout 60 "$ROOT/tests/bin/tzpurpose" "$PORT" "$CA" $((end + 10)) UTC
        status0=$status
        out0=$output
        assert_failure
        assert_line "conn=2 ok=0 resumed=0 verify=10"
        start_psk $v
        run env TZ=right/UTC RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 \
            "$ROOT/tests/bin/tzpurpose" "$PORT" "$CA" $((end + 10)) UTC
        assert_equal "$status" "$status0"
        assert_equal "$output" "$out0"
    done
}
