#!/usr/bin/env bats
# Real programs, unmodified, each making N HTTPS requests (a new connection
# each) in one process to a local server that logs whether each session was
# resumed: once without the shim and once with it. examples/tested-programs.md
# is these rows. Programs that keep sessions themselves
# (curl, wrk, openssl s_client -reconnect) must resume exactly as often
# with the shim as without; programs the shim cannot reach must run as
# without it.

# Shell snippets below are single-quoted on purpose: their own arguments.
# shellcheck disable=SC2016

load helpers
load matrix

N=10
P="$BATS_TEST_DIRNAME/programs"

# Under make test-asan (SHIM_PRELOAD set): curl hangs beside libasan, with
# or without the shim, so it runs under the plain build; PHP loads opcache
# with RTLD_DEEPBIND, which the sanitizer runtime refuses, so it runs
# without its ini files (its OpenSSL support is built in).
preload_for() { case $1 in curl) echo "$SHIM" ;; *) echo "$PRELOAD" ;; esac; }
PHP=(php)
[ -z "${SHIM_PRELOAD:-}" ] || PHP=(php -n)

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    export CA CERT KEY
    make_staple "$BATS_FILE_TMPDIR" good good.der
    make_staple "$BATS_FILE_TMPDIR" revoked revoked.der
    mx_nginx nginx nginx-stateful nginx-close nginx-staple
    mx_s_server
    local s
    for s in nginx13 nginx12 nginx-stateful13 nginx-stateful12 nginx-close13 nginx-close12 \
             nginx-staple13 nginx-staple12 s_server13 s_server12; do
        wait_port "$(srv_port "$s")"
    done
}

teardown_file() { mx_stop_all; }

# counted SERVER EXPECTED CMD...: runs CMD (every @PORT@ in it replaced by
# the server's port), which must succeed; the server must then have logged
# N connections of which EXPECTED resumed (">=K": at least K). Sets
# $counted to "RESUMED CONNECTIONS".
counted() {
    local server="$1" expected="$2"
    shift 2
    local port
    port=$(srv_port "$server")
    srv_reset "$server"
    run timeout 120 "${@//@PORT@/$port}"
    assert_success
    counted=$(srv_count "$server")
    local resumed=${counted% *} conns=${counted#* }
    assert_equal "$conns" "$N"
    if [ "${expected#>=}" != "$expected" ]; then
        [ "$resumed" -ge "${expected#>=}" ] || fail "resumed $resumed of $N, expected $expected"
    else
        assert_equal "$resumed" "$expected"
    fi
}

# row SERVER WITHOUT WITH CMD...: CMD without the shim, then under it.
row() {
    local server="$1" without="$2" with="$3"
    shift 3
    counted "$server" "$without" "$@"
    counted "$server" "$with" env LD_PRELOAD="$(preload_for "$1")" "$@"
}

# Each request on a connection of its own: curl would otherwise keep one.
urls() {
    local _
    for _ in $(seq "$N"); do printf 'https://localhost:@PORT@/ '; done
}

@test "C client, non-blocking: SSL_connect retried under poll on WANT_READ" {
    local v
    for v in 13 12; do
        row nginx$v 0 $((N - 1)) "$CLIENT" --mode nonblock --n "$N" --cafile "$CA" \
            --sni localhost --verify-host localhost @PORT@
        # The handshakes did wait in poll (under make test-asan the client
        # can be slow enough for every reply to be there already).
        [ -n "${SHIM_PRELOAD:-}" ] ||
            [ "$(sed -n 's/.*polled=\([0-9]*\).*/\1/p' <<< "$output")" -gt 0 ]
    done
}

@test "Python urllib.request.urlopen, a new SSL context per request" {
    row nginx13 0 $((N - 1)) "$PY" "$P/py_urllib.py" localhost @PORT@ "$N" "$CA"
    row nginx12 0 $((N - 1)) "$PY" "$P/py_urllib.py" localhost @PORT@ "$N" "$CA"
}

@test "Python http.client" {
    row nginx13 0 $((N - 1)) "$PY" "$P/py_httpclient.py" localhost @PORT@ "$N" "$CA"
    row nginx12 0 $((N - 1)) "$PY" "$P/py_httpclient.py" localhost @PORT@ "$N" "$CA"
}

@test "Python requests (Debian's python3-requests; SSL_OP_NO_TICKET)" {
    row nginx13 0 $((N - 1)) "$PY" "$P/py_requests.py" localhost @PORT@ "$N" "$CA"
    # urllib3 turns TLS 1.2 session tickets off: a TLS 1.2 session can
    # then only resume from the server's session cache, which nginx keeps
    # only when configured to (nginx-stateful).
    row nginx12 0 0 "$PY" "$P/py_requests.py" localhost @PORT@ "$N" "$CA"
    row nginx-stateful12 0 $((N - 1)) "$PY" "$P/py_requests.py" localhost @PORT@ "$N" "$CA"
}

@test "Python asyncio streams with ssl= (memory BIOs)" {
    row nginx13 0 $((N - 1)) "$PY" "$P/py_asyncio.py" localhost @PORT@ "$N" "$CA"
    row nginx12 0 $((N - 1)) "$PY" "$P/py_asyncio.py" localhost @PORT@ "$N" "$CA"
}

@test "PHP file_get_contents with an https stream context (verify callback)" {
    row nginx13 0 $((N - 1)) "${PHP[@]}" "$P/fetch.php" localhost @PORT@ "$N" "$CA"
    row nginx12 0 $((N - 1)) "${PHP[@]}" "$P/fetch.php" localhost @PORT@ "$N" "$CA"
}

@test "Ruby Net::HTTP (verify callback; SSL objects freed only by the garbage collector)" {
    # TLS 1.3: nginx sends one ticket per resumed handshake, the
    # connection's newest, which leaves the connection when Ruby shuts it
    # down, long before the garbage collector frees it (see
    # examples/tested-programs.md).
    row nginx13 0 $((N - 1)) ruby "$P/fetch.rb" localhost @PORT@ "$N" "$CA"
    row nginx12 0 $((N - 1)) ruby "$P/fetch.rb" localhost @PORT@ "$N" "$CA"
}

# Perl's IO::Socket::SSL (and LWP through it) asks for a stapled OCSP
# response and judges it in a status callback; a resumed connection is
# shown the staple its session's full handshake received.
# stapling_rows SCRIPT: a Perl client with its defaults against nginx
# without and with a staple, TLS 1.3 and 1.2.
stapling_rows() {
    local v s
    for v in 13 12; do
        for s in nginx nginx-staple; do
            row $s$v 0 $((N - 1)) perl "$P/$1" localhost @PORT@ "$N" "$CA"
        done
    done
}

@test "Perl LWP::UserAgent, defaults (OCSP stapling asked for), against nginx with and without a staple" {
    stapling_rows lwp.pl
}

@test "Perl LWP::UserAgent with SSL_ocsp_mode => SSL_OCSP_NO_STAPLE" {
    row nginx13 0 $((N - 1)) perl "$P/lwp.pl" localhost @PORT@ "$N" "$CA" no-staple
    row nginx12 0 $((N - 1)) perl "$P/lwp.pl" localhost @PORT@ "$N" "$CA" no-staple
}

@test "Perl IO::Socket::SSL, defaults (OCSP stapling asked for), against nginx with and without a staple" {
    stapling_rows iosocketssl.pl
}

@test "Perl IO::Socket::SSL with SSL_OCSP_MUST_STAPLE: resumed connections are shown the staple" {
    row nginx-staple13 0 $((N - 1)) perl "$P/iosocketssl.pl" localhost @PORT@ "$N" "$CA" must-staple
    row nginx-staple12 0 $((N - 1)) perl "$P/iosocketssl.pl" localhost @PORT@ "$N" "$CA" must-staple
}

@test "Perl IO::Socket::SSL with SSL_ocsp_mode => SSL_OCSP_NO_STAPLE" {
    row nginx13 0 $((N - 1)) perl "$P/iosocketssl.pl" localhost @PORT@ "$N" "$CA" no-staple
    row nginx12 0 $((N - 1)) perl "$P/iosocketssl.pl" localhost @PORT@ "$N" "$CA" no-staple
}

@test "Perl against a revoked staple: every connection fails, as without the shim, nothing offered" {
    # The tests' server logs the identities each ClientHello offered.
    local v prog
    for v in --tls13 --tls12; do
        for prog in lwp iosocketssl; do
            start_psk $v --staple "$BATS_FILE_TMPDIR/revoked.der"
            run timeout 120 perl "$P/$prog.pl" localhost "$PORT" "$N" "$CA"
            assert_failure
            assert_output "ok 0"
            run env LD_PRELOAD="$PRELOAD" timeout 120 perl "$P/$prog.pl" localhost "$PORT" "$N" "$CA"
            assert_failure
            assert_output "ok 0"
            assert_equal "$(connections)" $((2 * N))
            assert_equal "$(offers)" 0
        done
    done
}

@test "curl, N URLs in one process: its own session cache, unchanged by the shim" {
    # shellcheck disable=SC2046
    row nginx13 $((N - 1)) $((N - 1)) curl -sS -H 'Connection: close' --cacert "$CA" $(urls)
    # curl turns TLS 1.2 session tickets off (SSL_OP_NO_TICKET): TLS 1.2
    # resumes only from a server's session cache, shim or not.
    # shellcheck disable=SC2046
    row nginx12 0 0 curl -sS -H 'Connection: close' --cacert "$CA" $(urls)
    # shellcheck disable=SC2046
    row nginx-stateful12 $((N - 1)) $((N - 1)) curl -sS -H 'Connection: close' --cacert "$CA" \
        $(urls)
}

# wrk_run SERVER [env...]: a one-second run of wrk with 2 connections
# against a server that closes after every request. Sets $wrk_conns
# (connections the server saw) and $wrk_full (of those, not resumed).
wrk_run() {
    local server="$1" port c
    shift
    port=$(srv_port "$server")
    srv_reset "$server"
    run env "$@" timeout 60 wrk -t1 -c2 -d1s "https://localhost:$port/"
    assert_success
    c=$(srv_count "$server")
    wrk_conns=${c#* }
    wrk_full=$((${c#* } - ${c% *}))
}

@test "wrk: its own resumption (SSL_clear, same session), unchanged by the shim, and counted" {
    local v
    for v in 13 12; do
        # One full handshake per wrk connection, every reconnection resumed.
        wrk_run nginx-close$v
        [ "$wrk_conns" -gt 100 ]
        assert_equal "$wrk_full" 2
        wrk_run nginx-close$v LD_PRELOAD="$PRELOAD" RESUMESHIM_STATS=1
        [ "$wrk_conns" -gt 100 ]
        assert_equal "$wrk_full" 2
        # The shim's counters agree with the server: every handshake and
        # every resumption, though wrk offered each session itself (each of
        # the 2 connections may have had one more under way as wrk stopped,
        # which the server never logged).
        local stats shakes resumed
        stats=$(grep '^resumeshim\[' <<< "$output")
        shakes=$(sed -n 's/.* handshakes=\([0-9]*\) .*/\1/p' <<< "$stats")
        resumed=$(sed -n 's/.* resumed=\([0-9]*\) .*/\1/p' <<< "$stats")
        assert_equal "$(sed -n 's/.* offered=\([0-9]*\) .*/\1/p' <<< "$stats")" 0
        [ "$shakes" -ge "$wrk_conns" ] && [ "$shakes" -le $((wrk_conns + 2)) ]
        [ "$resumed" -ge $((wrk_conns - 2)) ] && [ "$resumed" -le "$wrk_conns" ]
    done
}

@test "openssl s_client -sess_out / -sess_in: its own resumption, unchanged by the shim" {
    # One process per connection; each after the first reads the session
    # the first wrote.
    local v
    for v in 13 12; do
        row s_server$v $((N - 1)) $((N - 1)) sh -c '
            rm -f "$3"
            for i in $(seq "$2"); do
                s=-sess_out; [ -f "$3" ] && s=-sess_in
                printf "GET / HTTP/1.0\r\n\r\n" | openssl s_client -connect 127.0.0.1:@PORT@ \
                    -servername localhost -CAfile "$1" -verify_return_error -ign_eof $s "$3" \
                    > /dev/null 2>&1 || exit 1
            done' sh "$CA" "$N" "$BATS_TEST_TMPDIR/sess.pem"
    done
}

# One process per connection: nothing to resume inside a process; the
# shim's cross-process store (RESUMESHIM_STORE) carries sessions from one
# to the next.
# per_process SERVER WITH-STORE CMD...: CMD run N times (one connection
# each) without the shim, with it, and with it and a store.
per_process() {
    local server="$1" with_store="$2"
    shift 2
    local store="$BATS_TEST_TMPDIR/store"
    local repeat='n=$1; shift; for _ in $(seq "$n"); do "$@" || exit 1; done'
    rm -rf "$store"
    counted "$server" 0 bash -c "$repeat" sh "$N" "$@"
    counted "$server" 0 env LD_PRELOAD="$(preload_for "$1")" bash -c "$repeat" sh "$N" "$@"
    counted "$server" "$with_store" env LD_PRELOAD="$(preload_for "$1")" RESUMESHIM_STORE="$store" \
        bash -c "$repeat" sh "$N" "$@"
}

@test "curl, one process per request, with the store" {
    per_process nginx13 $((N - 1)) curl -sS --cacert "$CA" https://localhost:@PORT@/
    # TLS 1.2: curl turns tickets off, so the server's cache is needed
    per_process nginx-stateful12 $((N - 1)) curl -sS --cacert "$CA" https://localhost:@PORT@/
}

@test "openssl s_client, one process per connection, with the store" {
    local v
    for v in 13 12; do
        per_process s_server$v $((N - 1)) sh -c '
            printf "GET / HTTP/1.0\r\n\r\n" | openssl s_client -connect 127.0.0.1:@PORT@ \
                -servername localhost -CAfile "$1" -verify_return_error -ign_eof > /dev/null 2>&1
            ' sh "$CA"
    done
}

@test "socat with an openssl: address, one process per connection, with the store" {
    local v
    for v in 13 12; do
        per_process nginx$v $((N - 1)) sh -c '
            printf "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n" |
                socat - "OPENSSL:localhost:@PORT@,cafile=$1" | grep -qx ok' sh "$CA"
    done
}

@test "Python urllib, one process per request, with the store" {
    per_process nginx13 $((N - 1)) "$PY" "$P/py_urllib.py" localhost @PORT@ 1 "$CA"
    per_process nginx12 $((N - 1)) "$PY" "$P/py_urllib.py" localhost @PORT@ 1 "$CA"
}

@test "Tcl's http over the tls package (an SSL BIO's reads and writes only), one process per request, with the store" {
    local v
    for v in 13 12; do
        per_process nginx$v $((N - 1)) tclsh "$P/fetch.tcl" localhost @PORT@ 1 "$CA"
        # the program's own output, byte for byte
        run tclsh "$P/fetch.tcl" localhost "$(srv_port nginx$v)" 3 "$CA"
        local out0=$output
        run env LD_PRELOAD="$PRELOAD" tclsh "$P/fetch.tcl" localhost "$(srv_port nginx$v)" 3 "$CA"
        assert_success
        assert_equal "$output" "$out0"
    done
}

# Debian's Node.js (scripts/deps unpacks it: the machine's own node may be
# another build). Its https Agent serializes every ticket (i2d_SSL_SESSION)
# into a cache that dies with it.
DNODE="$ROOT/build/debian-node/usr/bin/node"

# node_output V MODE: fetch.js prints the same with and without the shim.
node_output() {
    run "$DNODE" "$P/fetch.js" localhost "$(srv_port nginx$1)" 3 "$CA" "$2"
    assert_success
    local out0=$output
    run env LD_PRELOAD="$PRELOAD" "$DNODE" "$P/fetch.js" localhost "$(srv_port nginx$1)" 3 "$CA" "$2"
    assert_success
    assert_equal "$output" "$out0"
}

@test "Debian's Node.js https.get, one process per request, with the store (its Agent serializes each ticket)" {
    local v
    for v in 13 12; do
        per_process nginx$v $((N - 1)) "$DNODE" "$P/fetch.js" localhost @PORT@ 1 "$CA" shared
        node_output $v shared
    done
}

# node_serializes: whether Debian's Node.js serializes every ticket of a
# connection that has no Agent to cache it: Node 18 hands each to a
# session event; Node 20 here connects through a second TLSWrap whose
# session callbacks are never enabled (below).
node_serializes() { [ "$("$DNODE" -p 'process.versions.node.split(".")[0]')" -lt 20 ]; }

# A TLS 1.3 ticket the program serialized is its own (libresumeshim(7)):
# the shim offers none in the process that serialized it, whatever the
# program does with the bytes.
@test "Debian's Node.js, an Agent per request (agent: false), in one process" {
    local v with
    for v in 13 12; do
        # (a TLS 1.2 session is reusable: the program's and the shim's both)
        with=$((N - 1))
        [ "$v" = 12 ] || ! node_serializes || with=0
        row nginx$v 0 "$with" "$DNODE" "$P/fetch.js" localhost @PORT@ "$N" "$CA" none
        node_output $v none
    done
}

# Node 18's Agent resumes every request after the first by itself; Node
# 20's none here: it tries localhost's ::1 first and, refused, wraps the
# socket in a second TLSWrap whose session callbacks are never enabled, so
# its Agent caches nothing (with --dns-result-order=ipv4first it resumes).
# Under the shim: every request after the first, its own cache's offers
# left as they are.
@test "Debian's Node.js, one shared Agent: its own session cache kept, and resumed under the shim" {
    local v
    for v in 13 12; do
        counted nginx$v ">=0" "$DNODE" "$P/fetch.js" localhost @PORT@ "$N" "$CA" shared
        local own=${counted% *}
        [ "$own" = 0 ] || [ "$own" = $((N - 1)) ] || fail "its own cache resumed $own of $N"
        counted nginx$v $((N - 1)) env LD_PRELOAD="$PRELOAD" "$DNODE" "$P/fetch.js" localhost \
            @PORT@ "$N" "$CA" shared
    done
}

@test "Debian's Node.js through the store, with and without its own cache: no ticket offered twice" {
    start_psk --tls13
    local store="$BATS_TEST_TMPDIR/store" mode i
    for mode in shared none shared; do
        for i in 1 2 3; do
            env LD_PRELOAD="$PRELOAD" RESUMESHIM_STORE="$store" \
                "$DNODE" "$P/fetch.js" localhost "$PORT" 1 "$CA" $mode
        done
        env LD_PRELOAD="$PRELOAD" RESUMESHIM_STORE="$store" \
            "$DNODE" "$P/fetch.js" localhost "$PORT" 4 "$CA" $mode
    done
    assert_equal "$(connections)" 21
    # all but the very first resume: from the store, the pool or the Agent;
    # where Node serializes every ticket, those of the process with no
    # Agent (none, 4 requests) are its own until it exits: its last three
    # requests are full
    if node_serializes; then
        assert_equal "$(resumed)" 17
    else
        assert_equal "$(resumed)" 20
    fi
    run offered_twice
    assert_output ""
}

# same_output CMD...: CMD run without and with the shim prints the same,
# exits the same (0), and the shim does not report (RESUMESHIM_STATS=1
# would print a summary line on stderr had it been loaded).
same_output() {
    local d="$BATS_TEST_TMPDIR" rc0=0 rc1=0
    "$@" > "$d/out0" 2> "$d/err0" || rc0=$?
    env LD_PRELOAD="$PRELOAD" RESUMESHIM_STATS=1 "$@" > "$d/out1" 2> "$d/err1" || rc1=$?
    assert_equal "$rc0" 0
    assert_equal "$rc1" 0
    run diff "$d/out0" "$d/out1"
    assert_success
    run grep -c resumeshim "$d/err1"
    assert_output 0
}

@test "Perl, one process per request, with the store: the staple travels with the session" {
    local v
    for v in 13 12; do
        per_process nginx-staple$v $((N - 1)) perl "$P/lwp.pl" localhost @PORT@ 1 "$CA"
        per_process nginx-staple$v $((N - 1)) perl "$P/iosocketssl.pl" localhost @PORT@ 1 "$CA" \
            must-staple
    done
}

@test "curl --cert-status, one process per request, with the store: it finds the staple on resumed connections" {
    # curl checks after the handshake that a valid staple came, and fails
    # the transfer without one. TLS 1.3 only: curl turns TLS 1.2 tickets off.
    per_process nginx-staple13 $((N - 1)) curl -sS --cert-status --cacert "$CA" \
        https://localhost:@PORT@/
}

@test "links2 -dump, one process per request, with the store (it takes each ticket with SSL_get1_session)" {
    local v
    for v in 13 12; do
        per_process nginx$v $((N - 1)) env SSL_CERT_FILE="$CA" links2 -dump https://localhost:@PORT@/
    done
}

@test "PHP, one process per request, with the store (its verify callback sees the stored chain)" {
    per_process nginx13 $((N - 1)) "${PHP[@]}" "$P/fetch.php" localhost @PORT@ 1 "$CA"
    per_process nginx12 $((N - 1)) "${PHP[@]}" "$P/fetch.php" localhost @PORT@ 1 "$CA"
}

@test "a program that exits without freeing its connection still leaves its newest ticket to the store" {
    # As wget does: no SSL_shutdown, no SSL_free. The ticket the connection
    # held reaches the store at exit, and no ticket is offered twice.
    local v k
    for v in --tls13 --tls12; do
        start_psk "$v"
        for k in $(seq "$N"); do
            run env LD_PRELOAD="$PRELOAD" RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store$v" \
                timeout 60 "$CLIENT" --no-free --n 1 --cafile "$CA" --sni localhost \
                --verify-host localhost "$PORT"
            assert_success
        done
        assert_equal "$(resumed)" $((N - 1))
        assert_equal "$(offered_twice)" ""
    done
}

@test "wget built from Debian's source with OpenSSL, one process per request, with the store" {
    # Built once (about a minute) and kept in build/wget-openssl.
    local w
    w="$ROOT/$("$ROOT/scripts/build-wget-openssl")"
    ldd "$w" | grep -q 'libssl\.so\.3'
    # wget exits without freeing its connection: its newest TLS 1.3 ticket
    # reaches the store at exit.
    per_process nginx13 $((N - 1)) "$w" -q -O /dev/null --ca-certificate="$CA" \
        https://localhost:@PORT@/
    per_process nginx12 $((N - 1)) "$w" -q -O /dev/null --ca-certificate="$CA" \
        https://localhost:@PORT@/
}

# Its own session cache (curl's, per handle) resumes nothing here: each
# request has a handle of its own. Where its libcurl binds past the preload
# (PHP 8.2's RTLD_DEEPBIND), the shim leaves it alone: nothing offered, not
# even from the store, where curl's command leaves sessions under the same
# configuration. Where it does not (PHP 8.4), it is libcurl as any program
# has it: it resumes, but for the TLS 1.3 tickets a libcurl that serializes
# them holds itself.
# (The sanitizer runtime refuses RTLD_DEEPBIND: the plain build, always.)
# The libcurl programs load.
curl_lib() { ldconfig -p | awk '/libcurl\.so\.4 .*x86-64/ { print $NF; exit }'; }

@test "PHP's curl extension: left alone where its libcurl binds past the preload, resumed where it does not" {
    local v deep=0 with
    php_deepbinds && deep=1
    for v in 13 12 stateful12; do
        run php "$P/curl.php" localhost "$(srv_port nginx${v/stateful/-stateful})" "$N" "$CA"
        assert_output "ok $N"
        counted nginx${v/stateful/-stateful} 0 php "$P/curl.php" localhost @PORT@ "$N" "$CA"
        run env LD_PRELOAD="$SHIM" RESUMESHIM_STATS=1 php "$P/curl.php" localhost \
            "$(srv_port nginx${v/stateful/-stateful})" "$N" "$CA"
        assert_success
        assert_line --index 0 "ok $N"
        # loaded, and seeing no handshake of its own, or seeing them all;
        # libcurl turns TLS 1.2 tickets off (SSL_OP_NO_TICKET,
        # lib/vtls/openssl.c of curl 8.14.1), so a TLS 1.2 server resumes
        # its sessions only from a session cache, as for Python's requests
        if [ $deep = 1 ]; then
            assert_line --partial "handshakes=0 offered=0 resumed=0"
            with=0
        else
            assert_line --partial "handshakes=$N "
            with=$([ $v = 12 ] && echo 0 || echo $((N - 1)))
            # a libcurl that serializes its sessions for its own cache
            # (i2d_SSL_SESSION: 8.14, not 7.88) holds every TLS 1.3 ticket
            # it may offer itself: the shim offers none of them, and each
            # handle's cache dies with it, as without the shim
            if [ $v = 13 ] && objdump -T "$(curl_lib)" | grep -q 'i2d_SSL_SESSION'; then
                with=0
            fi
        fi
        counted nginx${v/stateful/-stateful} $with env LD_PRELOAD="$SHIM" php "$P/curl.php" \
            localhost @PORT@ "$N" "$CA"
    done
    per_process nginx13 $((N - 1)) curl -sS --cacert "$CA" https://localhost:@PORT@/
    # From the store, every request resumes; where libcurl serializes its
    # tickets, only those the store held: the curl command's runs leave two
    # (nginx hands out two after a full handshake, one after a resumed one,
    # and each run takes one), and the process's own are its libcurl's.
    with=$N
    objdump -T "$(curl_lib)" | grep -q 'i2d_SSL_SESSION' && with=2
    counted nginx13 $(( deep ? 0 : with )) env LD_PRELOAD="$SHIM" \
        RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store" php "$P/curl.php" localhost @PORT@ "$N" "$CA"
}

@test "unaffected: a statically linked OpenSSL program, unharmed" {
    local v
    for v in 13 12; do
        same_output "$ROOT/tests/bin/client-static" --n "$N" --cafile "$CA" \
            --verify-host localhost --sni localhost "$(srv_port nginx$v)"
        assert_equal "$(cat "$BATS_TEST_TMPDIR/out1")" "reused=0 of=$N failed=0"
        row nginx$v 0 0 "$ROOT/tests/bin/client-static" --n "$N" --cafile "$CA" @PORT@
    done
}

@test "unaffected: the machine's node, when it carries its own OpenSSL (NodeSource's), unharmed" {
    local node
    node=$(command -v node)
    # Debian's node links the system's libssl3: its rows are above
    if ldd "$node" | grep -q 'libssl\.so\.3'; then
        row nginx13 0 $((N - 1)) "$node" "$P/fetch.js" localhost @PORT@ "$N" "$CA" none
        return
    fi
    run env LD_PRELOAD="$PRELOAD" RESUMESHIM_STATS=1 "$node" "$P/fetch.js" localhost \
        "$(srv_port nginx13)" "$N" "$CA" none
    assert_success
    assert_output "ok $N"
    row nginx13 0 0 "$node" "$P/fetch.js" localhost @PORT@ "$N" "$CA" none
    row nginx13 $((N - 1)) $((N - 1)) "$node" "$P/fetch.js" localhost @PORT@ "$N" "$CA" shared
}

@test "unaffected: a setuid program (the loader ignores LD_PRELOAD), unharmed" {
    # Another user's setuid copy of the test client: run by us, it is a
    # secure-execution program, for which the loader drops LD_PRELOAD.
    local d="$BATS_TEST_TMPDIR/suid" v
    mkdir -p "$d"
    chmod 755 "$d"
    cp "$CLIENT" "$d/client"
    chown daemon "$d/client"
    chmod 4755 "$d/client"
    for v in 13 12; do
        same_output "$d/client" --n "$N" "$(srv_port nginx$v)"
        assert_equal "$(cat "$BATS_TEST_TMPDIR/out1")" "reused=0 of=$N failed=0"
        row nginx$v 0 0 "$d/client" --n "$N" @PORT@
    done
}
