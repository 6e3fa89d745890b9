#!/usr/bin/env bats
# The server mode (RESUMESHIM_SERVER=1): servers that build a context per
# connection or per worker resume, a ticket is accepted only by the
# configuration that issued it and only for two key periods, and servers
# that manage their own ticket keys are left alone. Judged by each server's
# own verdict per connection, and by the ticket key names on the wire.

load helpers

WRAPSERVER="$ROOT/tests/servers/wrapserver.py"

# A second certificate, under a CA of its own.
setup() {
    OTHER="$BATS_TEST_TMPDIR/other"
    mkdir -p "$OTHER"
}

# server_dir: a directory for one server ($D), with its log ($SLOG).
server_dir() {
    D=$(mktemp -d "$BATS_TEST_TMPDIR/server.XXXX")
    SLOG="$D/log"
    : > "$SLOG"
}

# serve [env...] -- COMMAND...: runs a server under the shim in the
# background (its output in $D/out), recorded for teardown; waits for it to
# write its port(s) to $D/port, one per line, and sets PORTS and PORT (the
# first).
serve() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" LD_PRELOAD="$PRELOAD" "$@" > "$D/out" 2>&1 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    local i
    for i in $(seq 200); do [ -s "$D/port" ] && break; sleep 0.05; done
    mapfile -t PORTS < "$D/port"
    PORT=${PORTS[0]}
}

# start_wrap [env...] -- CERT:KEY...: the per-connection ssl.wrap_socket
# server; one port per certificate.
start_wrap() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    server_dir
    serve "${envs[@]}" -- "$PY" "$WRAPSERVER" "$SLOG" "$D/port" "$@"
}

# start_gunicorn WORKERS [launcher...]: gunicorn's sync workers, which call
# ssl.wrap_socket for each connection, started through the launcher (by
# default the shim, server mode off); sets PORT and SLOG.
start_gunicorn() {
    local workers=$1 d
    shift
    [ $# -gt 0 ] || set -- env LD_PRELOAD="$PRELOAD"
    d=$(mktemp -d "$BATS_TEST_TMPDIR/gunicorn.XXXX")
    SLOG="$d/log"
    PORT=$(free_port)
    RESUME_LOG="$SLOG" "$@" gunicorn --chdir "$ROOT/tests/servers" \
        -w "$workers" -b "127.0.0.1:$PORT" --certfile "$CERT" --keyfile "$KEY" \
        gunicorn_app:app > "$d/out" 2>&1 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    local i
    for i in $(seq 100); do
        [ "$(grep -c 'Booting worker' "$d/out")" -ge "$workers" ] && break
        sleep 0.1
    done
    wait_port "$PORT"
}

# Connections logged, and how many of them the server resumed.
served() { grep -c 'resumed=' "$SLOG" || true; }

# The key name of the first session's ticket in a DER file: 16 bytes, hex.
ticket_name() {
    openssl sess_id -inform DER -in "$1" -text -noout |
        sed -n '/TLS session ticket:/{n;p;n;p}' | cut -c 12-58 | tr -d ' \n-' | cut -c 1-32
}

# One connection that keeps its session in FILE (no shim on the client).
fetch_ticket() {
    rm -f "$1"
    run client --keep --save "$1" "${@:2}"
    assert_success
    [ -s "$1" ]
}

# Offers the session in FILE on one connection (no shim on the client).
offer() {
    run client --load "$@"
    assert_success
}

# Sleeps until SECONDS-long periods turn over, plus a little.
next_period() {
    /usr/bin/python3 -c 'import time,sys; p=float(sys.argv[1]); t=time.time(); time.sleep(p - t % p + 0.25)' "$1"
}

@test "server mode off: a server with a context per connection never resumes" {
    start_wrap -- "$CERT:$KEY"
    run with_shim "$CLIENT" --n 10 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_output "reused=0 of=10 failed=0"
    assert_equal "$(served)" 10
    assert_equal "$(resumed)" 0
}

@test "ssl.wrap_socket per connection: 19 of 20 resumed, TLS 1.3 and TLS 1.2" {
    start_wrap RESUMESHIM_SERVER=1 -- "$CERT:$KEY"
    run with_shim "$CLIENT" --n 20 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_output "reused=19 of=20 failed=0"
    assert_equal "$(resumed)" 19
    : > "$SLOG"
    run with_shim "$CLIENT" --tls12 --n 20 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(resumed)" 19
    # renewal: TLS 1.3 tickets are single use on the client, so every
    # resumption must have brought a new one, and did
    assert_equal "$(served)" 20
}

@test "gunicorn, 1 worker: none resumed without the server mode, >= 95 % with it" {
    start_gunicorn 1
    run with_shim "$CLIENT" --n 40 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(served)" 40
    assert_equal "$(resumed)" 0
    teardown
    start_gunicorn 1 env RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD"
    run with_shim "$CLIENT" --n 40 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(served)" 40
    [ "$(resumed)" -ge 38 ]
    # curl resumes with its own session cache, several URLs in one process
    : > "$SLOG"
    run curl -sS --cacert "$CA" $(for i in $(seq 20); do echo "https://localhost:$PORT/"; done)
    assert_success
    assert_equal "$(served)" 20
    [ "$(resumed)" -ge 19 ]
}

@test "resumeshim --server gunicorn, 4 workers: the forked workers share the keys, >= 95 % resumed" {
    # without a store, so that only what the workers inherited is shared
    # (the command runs the plain build, which is what it finds)
    start_gunicorn 4 "$ROOT/scripts/resumeshim" --server --no-store
    # four at a time, so that the workers take turns: a ticket one issued
    # is offered to another
    run with_shim "$CLIENT" --warmup 8 --threads 4 --n 25 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_equal "$(served)" 108
    [ "$(resumed)" -ge 103 ]
    [ "$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$SLOG" | sort -u | wc -l)" -ge 2 ]
    : > "$SLOG"
    run curl -sS --cacert "$CA" $(for i in $(seq 20); do echo "https://localhost:$PORT/"; done)
    assert_success
    [ "$(resumed)" -ge 19 ]
}

@test "two certificates in one process: a ticket from one is refused by the other" {
    make_certs "$OTHER"
    start_wrap RESUMESHIM_SERVER=1 -- "$CERT:$KEY" "$OTHER/server.pem:$OTHER/server.key"
    local v
    for v in --tls13 --tls12; do
        fetch_ticket "$BATS_TEST_TMPDIR/a.der" "$v" "${PORTS[0]}"
        : > "$SLOG"
        offer "$BATS_TEST_TMPDIR/a.der" "$v" "${PORTS[1]}"
        assert_output "reused=0 of=1 failed=0"
        # the ticket was good: the server that issued it takes it
        offer "$BATS_TEST_TMPDIR/a.der" "$v" "${PORTS[0]}"
        assert_output "reused=1 of=1 failed=0"
        assert_equal "$(grep -c "port=${PORTS[1]} resumed=0" "$SLOG")" 1
        assert_equal "$(grep -c "port=${PORTS[0]} resumed=1" "$SLOG")" 1
    done
}

@test "client certificates: a ticket from a context that asks for none is refused where one is required" {
    cat "$CERT" "$KEY" > "$BATS_TEST_TMPDIR/client.pem"
    start_wrap RESUMESHIM_SERVER=1 -- "$CERT:$KEY" "$CERT:$KEY:$CA"
    local v
    for v in --tls13 --tls12; do
        fetch_ticket "$BATS_TEST_TMPDIR/a.der" "$v" "${PORTS[0]}"
        : > "$SLOG"
        # the same certificate, but this listener requires a client's: a
        # resumption would let in a client that never showed one
        offer "$BATS_TEST_TMPDIR/a.der" --client-cert "$BATS_TEST_TMPDIR/client.pem" "$v" \
            "${PORTS[1]}"
        assert_output "reused=0 of=1 failed=0"
        assert_equal "$(grep -c "port=${PORTS[1]} resumed=0" "$SLOG")" 1
        # while its own tickets resume there
        fetch_ticket "$BATS_TEST_TMPDIR/b.der" --client-cert "$BATS_TEST_TMPDIR/client.pem" \
            "$v" "${PORTS[1]}"
        offer "$BATS_TEST_TMPDIR/b.der" --client-cert "$BATS_TEST_TMPDIR/client.pem" "$v" \
            "${PORTS[1]}"
        assert_output "reused=1 of=1 failed=0"
    done
}

@test "key rotation: the previous period's ticket is accepted and renewed, an older one refused" {
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_TICKET_KEY_ROTATE=2 -- "$CERT:$KEY"
    next_period 2
    fetch_ticket "$BATS_TEST_TMPDIR/t1.der" "$PORT"
    next_period 2
    # one period later: accepted, and the connection brought a new ticket,
    # named for the new period
    rm -f "$BATS_TEST_TMPDIR/t2.der"
    run client --load "$BATS_TEST_TMPDIR/t1.der" --keep --save "$BATS_TEST_TMPDIR/t2.der" "$PORT"
    assert_output "reused=1 of=1 failed=0"
    [ -s "$BATS_TEST_TMPDIR/t2.der" ]
    local n1 n2
    n1=$(ticket_name "$BATS_TEST_TMPDIR/t1.der")
    n2=$(ticket_name "$BATS_TEST_TMPDIR/t2.der")
    assert_equal "${#n1}" 32
    [ "$n1" != "$n2" ]
    next_period 2
    # two periods after it was issued: refused, a full handshake that works
    offer "$BATS_TEST_TMPDIR/t1.der" "$PORT"
    assert_output "reused=0 of=1 failed=0"
    # while the renewed one, from the previous period, is still good
    offer "$BATS_TEST_TMPDIR/t2.der" "$PORT"
    assert_output "reused=1 of=1 failed=0"
    assert_equal "$(served)" 4
    assert_equal "$(resumed)" 2
}

@test "independent server processes accept each other's tickets through the store's key file" {
    local store="$BATS_TEST_TMPDIR/store"
    start_wrap RESUMESHIM_SERVER=1 -- "$CERT:$KEY"
    local alone=$PORT
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$CERT:$KEY"
    local a=$PORT
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$CERT:$KEY"
    local b=$PORT
    fetch_ticket "$BATS_TEST_TMPDIR/a.der" "$a"
    offer "$BATS_TEST_TMPDIR/a.der" "$b"
    assert_output "reused=1 of=1 failed=0"
    # a process without the store has keys of its own
    offer "$BATS_TEST_TMPDIR/a.der" "$alone"
    assert_output "reused=0 of=1 failed=0"
    # the key file is private and holds one secret per period
    assert_equal "$(stat -c %a "$store/ticket-keys")" 600
    assert_equal "$(head -1 "$store/ticket-keys")" "resumeshim-ticket-keys 1"
    assert_equal "$(wc -l < "$store/ticket-keys")" 2
    # a server restarted on the same store takes the tickets of the last
    kill "$(tail -1 "$BATS_TEST_TMPDIR/pids")"
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$CERT:$KEY"
    offer "$BATS_TEST_TMPDIR/a.der" "$PORT"
    assert_output "reused=1 of=1 failed=0"
}

@test "a damaged key file is rebuilt; tickets are still issued and accepted" {
    local store="$BATS_TEST_TMPDIR/store"
    mkdir -m 700 "$store"
    printf 'resumeshim-ticket-keys 1\n3600 12 zz\ngarbage\n' > "$store/ticket-keys"
    : > "$store/resumeshim-store"
    chmod 600 "$store/ticket-keys" "$store/resumeshim-store"
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$CERT:$KEY"
    run with_shim "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_output "reused=4 of=5 failed=0"
    assert_equal "$(wc -l < "$store/ticket-keys")" 2
    refute grep -q garbage "$store/ticket-keys"
}

@test "nginx with its own ticket key file: its tickets stay under its key" {
    head -c 80 /dev/urandom > "$BATS_TEST_TMPDIR/nginx.key"
    RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD" start_nginx \
        "ssl_session_ticket_key $BATS_TEST_TMPDIR/nginx.key;"
    local v
    for v in --tls13 --tls12; do
        fetch_ticket "$BATS_TEST_TMPDIR/n.der" "$v" "$PORT"
        assert_equal "$(ticket_name "$BATS_TEST_TMPDIR/n.der")" \
            "$(head -c 16 "$BATS_TEST_TMPDIR/nginx.key" | od -An -tx1 | tr -d ' \n')"
    done
    run with_shim "$CLIENT" --n 10 --cafile "$CA" --sni localhost "$PORT"
    assert_output "reused=9 of=10 failed=0"
    assert_equal "$(nginx_resumed)" 9
}

@test "nginx without a key of its own: under the server mode its tickets are the ring's" {
    RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD" start_nginx
    fetch_ticket "$BATS_TEST_TMPDIR/n.der" "$PORT"
    local name epoch
    name=$(ticket_name "$BATS_TEST_TMPDIR/n.der")
    epoch=$(( $(date +%s) / 3600 ))
    # the ring's names start with their period's number
    [ "$((16#${name:0:16}))" -ge $((epoch - 1)) ] && [ "$((16#${name:0:16}))" -le "$epoch" ]
    teardown
    # and with the server mode off, OpenSSL's own random key is used
    LD_PRELOAD="$PRELOAD" start_nginx
    fetch_ticket "$BATS_TEST_TMPDIR/n.der" "$PORT"
    name=$(ticket_name "$BATS_TEST_TMPDIR/n.der")
    [ "${name:0:10}" != 0000000000 ]
}

@test "haproxy with tls-ticket-keys: its tickets stay under its keys" {
    local d="$BATS_TEST_TMPDIR/haproxy" backend
    mkdir "$d"
    PORT=$(free_port)
    backend=$(free_port)
    cat "$CERT" "$KEY" > "$d/cert.pem"
    for i in 1 2 3; do head -c 80 /dev/urandom | base64 -w0; echo; done > "$d/keys"
    cat > "$d/cfg" <<CONF
global
    maxconn 64
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend tls
    bind 127.0.0.1:$PORT ssl crt $d/cert.pem tls-ticket-keys $d/keys
    default_backend plain
backend plain
    server plain 127.0.0.1:$backend
frontend plain
    bind 127.0.0.1:$backend
    http-request return status 200 content-type text/plain string "ok"
CONF
    RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD" haproxy -f "$d/cfg" -db > "$d/out" 2>&1 3>&- \
        < /dev/null &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PORT"
    local names v
    names=$(while read -r k; do echo "$k" | base64 -d | head -c 16 | od -An -tx1 |
                tr -d ' \n'; echo; done < "$d/keys")
    for v in --tls13 --tls12; do
        fetch_ticket "$BATS_TEST_TMPDIR/h.der" "$v" "$PORT"
        run ticket_name "$BATS_TEST_TMPDIR/h.der"
        assert_equal "${#output}" 32
        grep -qx "$output" <<< "$names"
        offer "$BATS_TEST_TMPDIR/h.der" "$v" "$PORT"
        assert_output "reused=1 of=1 failed=0"
    done
}

@test "a C server with a context per connection runs clean under memcheck; TLS 1.3 and 1.2" {
    local v
    for v in --tls13 --tls12; do
        local d="$BATS_TEST_TMPDIR/vg$v"
        mkdir "$d"
        RESUMESHIM_STATS=1 RESUMESHIM_SERVER=1 LD_PRELOAD="$SHIM" timeout 300 valgrind -q --error-exitcode=9 $(vg_supp) \
            --leak-check=full --errors-for-leak-kinds=definite "$PSKSERVER" --cert "$CERT" \
            --key "$KEY" --port-file "$d/port" --log "$d/log" --ctx-per-conn --max 8 "$v" \
            > "$d/out" 2>&1 3>&- &
        local pid=$!
        for i in $(seq 300); do [ -s "$d/port" ] && break; sleep 0.1; done
        run with_shim "$CLIENT" --n 8 "$(cat "$d/port")"
        assert_success
        assert_output "reused=7 of=8 failed=0"
        local rc=0
        wait "$pid" || rc=$?
        assert_equal "$rc" 0
        assert_equal "$(grep -c 'resumed=1' "$d/log")" 7
        # the shim's own count agrees with the server's
        grep -q 'server_accepted=7 server_refused=0$' "$d/out"
    done
}

# start_psk_mode [env...] -- [pskserver options]: the tests' C server.
start_psk_mode() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    server_dir
    serve "${envs[@]}" -- "$PSKSERVER" --cert "$CERT" --key "$KEY" --port-file "$D/port" \
        --log "$SLOG" "$@"
}

@test "virtual hosts: each name resumes under the server mode, and a ticket never crosses names" {
    make_certs "$OTHER"
    local d="$BATS_TEST_TMPDIR/vhosts"
    mkdir "$d"
    PORT=$(free_port)
    RESUMESHIM_SERVER=1 LD_PRELOAD="$PRELOAD" nginx_run "$d" \
        "$(nginx_server "$PORT" "$CERT" "$KEY" "server_name a.test;")
$(nginx_server "$PORT" "$OTHER/server.pem" "$OTHER/server.key" "server_name b.test;")"
    echo "$NGINX_PID" >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PORT"
    local v
    for v in --tls13 --tls12; do
        : > "$SLOG"
        # b.test is served by the context the name callback switches to
        run with_shim "$CLIENT" "$v" --n 10 --sni b.test "$PORT"
        assert_output "reused=9 of=10 failed=0"
        run with_shim "$CLIENT" "$v" --n 10 --sni a.test "$PORT"
        assert_output "reused=9 of=10 failed=0"
        nginx_requests > /dev/null
        assert_equal "$(grep -c '^r .* b.test$' "$SLOG")" 9
        assert_equal "$(grep -c '^r .* a.test$' "$SLOG")" 9
        # a ticket for a.test, offered for b.test: a full handshake
        fetch_ticket "$BATS_TEST_TMPDIR/a.der" "$v" --sni a.test "$PORT"
        offer "$BATS_TEST_TMPDIR/a.der" "$v" --sni b.test "$PORT"
        assert_output "reused=0 of=1 failed=0"
    done
}

@test "client verification without a session id context: no tickets, and no failed connection" {
    local v
    for v in --tls13 --tls12; do
        start_psk_mode RESUMESHIM_SERVER=1 -- --verify --no-sid --ctx-per-conn
        run with_shim "$CLIENT" "$v" --n 6 "$PORT"
        assert_output "reused=0 of=6 failed=0"
        assert_equal "$(grep -c 'status=ok' "$SLOG")" 6
        # and with a session id context, the same server resumes
        start_psk_mode RESUMESHIM_SERVER=1 -- --verify --ctx-per-conn
        run with_shim "$CLIENT" "$v" --n 6 "$PORT"
        assert_output "reused=5 of=6 failed=0"
    done
}

@test "a TLS 1.2 ticket with extended master secret is not offered to a server without it" {
    local store="$BATS_TEST_TMPDIR/store"
    start_psk_mode RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- --tls12
    local a=$PORT
    start_psk_mode RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- --tls12 --no-ems
    fetch_ticket "$BATS_TEST_TMPDIR/a.der" "$a"
    # OpenSSL would fail the connection over the mismatch: the shim's keys
    # differ, so it is a full handshake
    offer "$BATS_TEST_TMPDIR/a.der" "$PORT"
    assert_output "reused=0 of=1 failed=0"
    assert_equal "$(grep -c 'status=ok version=TLSv1.2 resumed=0' "$SLOG")" 1
}

@test "a FIFO in place of the key file costs no connection" {
    local store="$BATS_TEST_TMPDIR/store"
    mkdir -m 700 "$store"
    install -m 600 /dev/null "$store/resumeshim-store"
    mkfifo -m 600 "$store/ticket-keys"
    start_psk_mode RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- --ctx-per-conn
    run timeout 20 env LD_PRELOAD="$PRELOAD" "$CLIENT" --n 4 "$PORT"
    assert_success
    # the process's own keys
    assert_output "reused=3 of=4 failed=0"
}

# start_vhost [env...] -- [vhostserver options]: one context serving a
# default host that requires a client certificate and b.test, which asks
# for none; under the shim. Sets PORT and SLOG.
start_vhost() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    server_dir
    serve "${envs[@]}" -- "$ROOT/tests/bin/vhostserver" --cert "$CERT" --key "$KEY" --ca "$CA" \
        --port-file "$D/port" --log "$SLOG" "$@"
}

vhostclient() { timeout 60 "$ROOT/tests/bin/vhostclient" "$@"; }

# The server's log line of connection N, from status on.
conn_line() { sed -n "s/^conn=$1 //p" "$SLOG"; }

@test "virtual hosts: a server name changed after a HelloRetryRequest takes no ticket into the host that requires a client certificate" {
    cat "$CERT" "$KEY" > "$BATS_TEST_TMPDIR/client.pem"
    local mode
    for mode in "" --hello-switch; do
        start_vhost RESUMESHIM_SERVER=1 -- --groups P-256 $mode
        # c1: the default host, with a certificate; c2: its ticket, no name
        # in the first ClientHello and b.test in the second; c3: no name
        # and c2's ticket, without a certificate
        run vhostclient hrr "$PORT" "$BATS_TEST_TMPDIR/client.pem"
        assert_success
        assert_equal "$(conn_line 1)" \
            "status=ok hellos=2 sni=- version=TLSv1.3 vhost=default peercert=1 resumed=0 tickets=2"
        # the ticket for no name is refused for b.test, and the renewal
        # is b.test's
        assert_equal "$(conn_line 2)" \
            "status=ok hellos=2 sni=b.test version=TLSv1.3 vhost=b.test peercert=0 resumed=0 tickets=2"
        assert_equal "$(conn_line 3)" "status=fail hellos=2 sni=-"
        refute grep 'status=ok .*vhost=default peercert=0' "$SLOG"
        teardown
    done
}

@test "virtual hosts: no ticket after a TLS 1.2 resumption from OpenSSL's session cache" {
    local mode
    for mode in "" --hello-switch; do
        start_vhost RESUMESHIM_SERVER=1 -- $mode
        # c1: b.test without a ticket; c2: b.test, resumed by session id,
        # with an empty ticket extension; c3 (only if c2 got a ticket): no
        # name, that ticket, no certificate
        run vhostclient sessid "$PORT"
        assert_success
        assert_equal "$(conn_line 1)" \
            "status=ok hellos=1 sni=b.test version=TLSv1.2 vhost=b.test peercert=0 resumed=0 tickets=0"
        # the session may carry no name: a ticket would be bound to none
        assert_equal "$(conn_line 2)" \
            "status=ok hellos=1 sni=b.test version=TLSv1.2 vhost=b.test peercert=0 resumed=1 tickets=0"
        assert_equal "$(connections)" 2
        refute grep 'status=ok .*vhost=default peercert=0' "$SLOG"
        teardown
    done
}

@test "SSL_dup of a server SSL the shim has seen runs clean under memcheck" {
    local d="$BATS_TEST_TMPDIR/vg"
    mkdir "$d"
    # after each connection the server clears its SSL and duplicates it
    RESUMESHIM_SERVER=1 LD_PRELOAD="$SHIM" timeout 120 valgrind -q --error-exitcode=9 $(vg_supp) \
        "$ROOT/tests/bin/vhostserver" --cert "$CERT" --key "$KEY" --ca "$CA" \
        --port-file "$d/port" --log "$d/log" --dup --max 3 > "$d/out" 2>&1 3>&- &
    local pid=$!
    for i in $(seq 300); do [ -s "$d/port" ] && break; sleep 0.1; done
    run client --n 2 --sni b.test "$(cat "$d/port")"
    assert_output "reused=0 of=2 failed=0"
    run client --tls12 --sni b.test "$(cat "$d/port")"
    assert_output "reused=0 of=1 failed=0"
    local rc=0
    wait "$pid" || rc=$?
    head -n 20 "$d/out"
    assert_equal "$rc" 0
    assert_equal "$(grep -c 'status=ok .*vhost=b.test' "$d/log")" 3
    refute grep 'dup=fail' "$d/log"
}

# client_cert NAME [CA]: $BATS_TEST_TMPDIR/NAME.pem, a client certificate
# and key for CN=NAME under the tests' CA (or CA.pem, whose key is CA.key).
client_cert() {
    local f="$BATS_TEST_TMPDIR/$1" ca="${2:-$CA}"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
        -keyout "$f.key" -out "$f.csr" 2>/dev/null
    openssl x509 -req -in "$f.csr" -CA "$ca" -CAkey "${ca%.pem}.key" -CAcreateserial \
        -days 1 -out "$f.crt" 2>/dev/null
    cat "$f.crt" "$f.key" > "$f.pem"
}

# start_policy [env...] -- [policyserver options]: a lenient listener
# (PORTS[0]) and a strict one (PORTS[1], CN=admin only), told apart only
# inside their callbacks.
start_policy() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    server_dir
    serve "${envs[@]}" -- ${POLICY_LAUNCH:-} "$ROOT/tests/bin/policyserver" --cert "$CERT" --key "$KEY" \
        --ca "$CA" --port-file "$D/port" --log "$SLOG" "$@"
}

# Connections the strict listener let in with the guest's certificate.
guests_let_in() { grep -c "port=${PORTS[1]} status=ok .*cn=guest" "$SLOG" || true; }

@test "a policy inside a callback: a guest's ticket from the lenient listener never opens the strict one" {
    client_cert guest
    client_cert admin
    local where v
    for where in arg appdata verify narrow revoke; do
        for v in --tls13 --tls12; do
            start_policy RESUMESHIM_SERVER=1 -- --policy "$where" "$v"
            # a full handshake: the strict listener refuses the guest
            run client --client-cert "$BATS_TEST_TMPDIR/guest.pem" "${PORTS[1]}"
            assert_equal "$(guests_let_in)" 0
            assert_equal "$(grep -c "port=${PORTS[1]} status=fail" "$SLOG")" 1
            fetch_ticket "$BATS_TEST_TMPDIR/g.der" --client-cert "$BATS_TEST_TMPDIR/guest.pem" \
                "${PORTS[0]}"
            # the guest's ticket, offered to the strict listener: judged
            # again in a full handshake, and refused
            run client --load "$BATS_TEST_TMPDIR/g.der" \
                --client-cert "$BATS_TEST_TMPDIR/guest.pem" "${PORTS[1]}"
            assert_equal "$(guests_let_in)" 0
            assert_equal "$(grep -c "port=${PORTS[1]} status=fail" "$SLOG")" 2
            # the lenient listener still resumes its own tickets, and the
            # strict one the admin's
            offer "$BATS_TEST_TMPDIR/g.der" --client-cert "$BATS_TEST_TMPDIR/guest.pem" \
                "${PORTS[0]}"
            assert_output "reused=1 of=1 failed=0"
            fetch_ticket "$BATS_TEST_TMPDIR/a.der" --client-cert "$BATS_TEST_TMPDIR/admin.pem" \
                "${PORTS[1]}"
            offer "$BATS_TEST_TMPDIR/a.der" --client-cert "$BATS_TEST_TMPDIR/admin.pem" \
                "${PORTS[1]}"
            assert_output "reused=1 of=1 failed=0"
            assert_equal "$(grep -c "port=${PORTS[1]} status=ok version=.* resumed=1 cn=admin" \
                "$SLOG")" 1
            teardown
        done
    done
}

@test "a policy inside a callback: no ticket crosses to another process through the store's key file" {
    client_cert guest
    local store="$BATS_TEST_TMPDIR/store" v first
    # without address randomisation the callbacks' addresses are the same
    # in both processes: only the contexts' identities tell them apart
    POLICY_LAUNCH="setarch $(uname -m) -R"
    for v in --tls13 --tls12; do
        start_policy RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$v"
        first=("${PORTS[@]}")
        fetch_ticket "$BATS_TEST_TMPDIR/g.der" --client-cert "$BATS_TEST_TMPDIR/guest.pem" \
            "${first[0]}"
        start_policy RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- "$v"
        # the other process's strict listener refuses the guest, and its
        # lenient one judges the guest anew
        run client --load "$BATS_TEST_TMPDIR/g.der" \
            --client-cert "$BATS_TEST_TMPDIR/guest.pem" "${PORTS[1]}"
        assert_equal "$(guests_let_in)" 0
        offer "$BATS_TEST_TMPDIR/g.der" --client-cert "$BATS_TEST_TMPDIR/guest.pem" "${PORTS[0]}"
        assert_output "reused=0 of=1 failed=0"
        # while the process that issued it still takes it
        offer "$BATS_TEST_TMPDIR/g.der" --client-cert "$BATS_TEST_TMPDIR/guest.pem" "${first[0]}"
        assert_output "reused=1 of=1 failed=0"
        # the key file was shared all along
        [ -s "$store/ticket-keys" ]
        teardown
    done
}

# hosts_case [client options...]: on the listeners of $PORTS (a lenient
# host first, taking any client of the tests' CA, then a strict one, taking
# clients of $OTHER's CA only), with server name h.test: the strict host
# refuses the guest in a full handshake and when the guest offers a ticket
# from the lenient host; the lenient host resumes its guest, the strict one
# its admin. Judged by the server's log.
hosts_case() {
    local g=(--sni h.test --client-cert "$BATS_TEST_TMPDIR/guest.pem" "$@")
    local a=(--sni h.test --client-cert "$BATS_TEST_TMPDIR/admin.pem" "$@")
    run client "${g[@]}" "${PORTS[1]}"
    assert_equal "$(grep -c "port=${PORTS[1]} status=fail" "$SLOG")" 1
    fetch_ticket "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${PORTS[0]}"
    run client --load "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${PORTS[1]}"
    assert_equal "$(grep -c "port=${PORTS[1]} status=fail" "$SLOG")" 2
    assert_equal "$(guests_let_in)" 0
    offer "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${PORTS[0]}"
    assert_output "reused=1 of=1 failed=0"
    assert_equal "$(grep -c "port=${PORTS[0]} status=ok .*resumed=1 cn=guest" "$SLOG")" 1
    fetch_ticket "$BATS_TEST_TMPDIR/a.der" "${a[@]}" "${PORTS[1]}"
    offer "$BATS_TEST_TMPDIR/a.der" "${a[@]}" "${PORTS[1]}"
    assert_output "reused=1 of=1 failed=0"
    assert_equal "$(grep -c "port=${PORTS[1]} status=ok .*resumed=1 cn=admin" "$SLOG")" 1
}

@test "hosts picked by a name, ClientHello or certificate callback: a guest's ticket from the lenient host never opens the strict one" {
    make_certs "$OTHER"
    client_cert guest
    client_cert admin "$OTHER/ca.pem"
    local sw v mode
    for sw in name hello cert; do
        for v in --tls13 --tls12; do
            # two listeners whose starting contexts are alike; each one's
            # callback moves h.test to a host of its own. The same without
            # the server mode (OpenSSL's keys, one per starting context).
            for mode in RESUMESHIM_SERVER=0 RESUMESHIM_SERVER=1; do
                start_policy "$mode" -- --switch "$sw" --ca2 "$OTHER/ca.pem" "$v"
                hosts_case
                teardown
            done
        done
    done
}

@test "hosts picked by a callback: through the store's key file, no ticket of another process opens the strict host" {
    make_certs "$OTHER"
    client_cert guest
    local store="$BATS_TEST_TMPDIR/store" sw v first
    # without address randomisation the callbacks' addresses are the same
    # in both processes
    POLICY_LAUNCH="setarch $(uname -m) -R"
    for sw in name hello cert; do
        for v in --tls13 --tls12; do
            start_policy RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- --switch "$sw" \
                --ca2 "$OTHER/ca.pem" "$v"
            first=("${PORTS[@]}")
            local g=(--sni h.test --client-cert "$BATS_TEST_TMPDIR/guest.pem")
            fetch_ticket "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${first[0]}"
            start_policy RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$store" -- --switch "$sw" \
                --ca2 "$OTHER/ca.pem" "$v"
            # the other process's strict host refuses the guest
            run client --load "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${PORTS[1]}"
            assert_equal "$(grep -c "port=${PORTS[1]} status=fail" "$SLOG")" 1
            assert_equal "$(guests_let_in)" 0
            # its lenient host: behind a name or certificate callback, a
            # context's tickets are its own (a full handshake); behind a
            # ClientHello callback, the host it picked judges the guest, and
            # takes it
            offer "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${PORTS[0]}"
            assert_output "reused=$([ "$sw" = hello ] && echo 1 || echo 0) of=1 failed=0"
            # while the process that issued it still takes it
            offer "$BATS_TEST_TMPDIR/g.der" "${g[@]}" "${first[0]}"
            assert_output "reused=1 of=1 failed=0"
            [ -s "$store/ticket-keys" ]
            teardown
        done
    done
}

@test "one starting context for both listeners, its ClientHello callback picking the host by port: the guest's ticket is judged by the strict host and declined" {
    make_certs "$OTHER"
    client_cert guest
    client_cert admin "$OTHER/ca.pem"
    local v
    for v in --tls13 --tls12; do
        # OpenSSL alone would take the ticket on either port (one context,
        # one key): the client's certificate is verified again under the
        # strict host's store, fails, and the handshake is a full one
        start_policy RESUMESHIM_SERVER=1 RESUMESHIM_LOG=debug -- --switch hello --shared \
            --ca2 "$OTHER/ca.pem" "$v"
        hosts_case
        assert_equal "$(grep -c 'server: ticket declined' "$D/out")" 1
        teardown
    done
}

@test "Python's sni_callback setting ssl_object.context: a guest's ticket from the lenient host never opens the strict one" {
    make_certs "$OTHER"
    client_cert guest
    client_cert admin "$OTHER/ca.pem"
    local v
    for v in --tls13 --tls12; do
        server_dir
        serve RESUMESHIM_SERVER=1 -- "$PY" "$ROOT/tests/servers/sniserver.py" "$SLOG" "$D/port" \
            "$CERT" "$KEY" "$CA" "$OTHER/ca.pem" "$v"
        hosts_case
        teardown
    done
}

@test "server mode: the application's own session-ticket callbacks still run: a ticket with its data resumes" {
    local v size
    for v in --tls13 --tls12; do
        # its generate callback puts 3000 bytes of its own in every ticket
        # (the server mode's decrypt callback stands in for its own, which
        # then accepts the ticket)
        start_psk_mode RESUMESHIM_SERVER=1 -- --ctx-per-conn --big-tickets 3000
        fetch_ticket "$BATS_TEST_TMPDIR/t.der" "$v" "$PORT"
        size=$(stat -c %s "$BATS_TEST_TMPDIR/t.der")
        [ "$size" -gt 3000 ]
        offer "$BATS_TEST_TMPDIR/t.der" "$v" "$PORT"
        assert_output "reused=1 of=1 failed=0"
        assert_equal "$(grep -c 'status=ok .*resumed=1' "$SLOG")" 1
        teardown
    done
}

# The session id a Python client sees across three TLS 1.2 connections to
# PORT, each offering the previous one's session: "reused same-id" for the
# second, then for the third, after the key period PERIOD turned over.
tls12_ids() {
    "$PY" - "$1" "$CA" "$2" <<'PY'
import socket, ssl, sys, time
port, ca, period = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
ctx = ssl.create_default_context(cafile=ca)
ctx.maximum_version = ssl.TLSVersion.TLSv1_2
def connect(session=None):
    with socket.create_connection(("127.0.0.1", port)) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.recv(100)
            return s.session, s.session_reused
first, _ = connect()
second, reused = connect(first)
print(f"reused={int(reused)} same-id={int(second.id == first.id)}")
time.sleep(period - time.time() % period + 0.25)
third, reused = connect(second)
print(f"reused={int(reused)} same-id={int(third.id == second.id)}")
PY
}

@test "TLS 1.2: no renewal under the current key (the session id stays), a renewal after a rotation" {
    start_wrap RESUMESHIM_SERVER=1 RESUMESHIM_TICKET_KEY_ROTATE=3 -- "$CERT:$KEY"
    # room for two connections before the period turns
    next_period 3
    run tls12_ids "$PORT" 3
    assert_success
    assert_line -n 0 "reused=1 same-id=1"
    assert_line -n 1 "reused=1 same-id=0"
    assert_equal "$(resumed)" 2
}

@test "the ticket keys' page is locked in memory; where it cannot be, one debug line and tickets all the same" {
    # AddressSanitizer (make test-asan) makes mlock succeed and do nothing
    local pid locks=1
    [[ "$PRELOAD" != *libasan* ]] || locks=0
    start_wrap RESUMESHIM_SERVER=1 -- "$CERT:$KEY"
    pid=$(tail -1 "$BATS_TEST_TMPDIR/pids")
    [ "$locks" = 0 ] || [ "$(awk '/^VmLck:/ { print $2 }' "/proc/$pid/status")" -ge 4 ]
    # without the capability and with no allowance, mlock is refused
    server_dir
    serve RESUMESHIM_SERVER=1 RESUMESHIM_LOG=debug -- capsh --drop=cap_ipc_lock -- \
        -c 'ulimit -l 0 && exec "$0" "$@"' "$PY" "$WRAPSERVER" "$SLOG" "$D/port" "$CERT:$KEY"
    run with_shim "$CLIENT" --n 5 --cafile "$CA" --sni localhost "$PORT"
    assert_output "reused=4 of=5 failed=0"
    assert_equal "$(resumed)" 4
    assert_equal "$(grep -c 'debug: ticket keys: not locked in memory' "$D/out")" "$locks"
    pid=$(tail -1 "$BATS_TEST_TMPDIR/pids")
    assert_equal "$(awk '/^VmLck:/ { print $2 }' "/proc/$pid/status")" 0
}

@test "server mode: contexts in a library context of their own, the default one unable to compute: resumed 5 of 6" {
    start_psk_mode RESUMESHIM_SERVER=1 -- --libctx --ctx-per-conn
    run with_shim "$CLIENT" --libctx --n 6 --cafile "$CA" --sni localhost "$PORT"
    assert_success
    assert_output "reused=5 of=6 failed=0"
    assert_equal "$(grep -c 'status=ok .*resumed=1' "$SLOG")" 5
}

@test "server mode: an application's own saved session, set on three later connections, resumes all three" {
    start_psk_mode RESUMESHIM_SERVER=1 -- --ctx-per-conn
    one_session_thrice
}
