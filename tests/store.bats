#!/usr/bin/env bats
# The cross-process store: one process per request resumes, tickets stay
# single use across processes, and a damaged or foreign store never costs
# a connection. Judged by the servers' logs.

load helpers

setup() {
    STORE="$BATS_TEST_TMPDIR/store"
}

# Runs a command under the shim with the store. curl hangs beside libasan
# (with or without the shim), so curl always runs under the plain build.
stored() { RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 60 "$@"; }
stored_curl() { RESUMESHIM_STORE="$STORE" LD_PRELOAD="$SHIM" timeout 60 curl "$@"; }

# Every entry file of the store, one per line.
entries() { find "$STORE" -name 's-*' -type f; }

@test "resumeshim curl once per request, 20 times: nginx resumes 19" {
    start_nginx
    # the command's default store, in the user's runtime directory
    export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/run"
    mkdir -m 0700 "$XDG_RUNTIME_DIR"
    for i in $(seq 20); do
        run "$ROOT/scripts/resumeshim" curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}\n' \
            "https://localhost:$PORT/"
        assert_success
        assert_output 200
    done
    [ "$(nginx_requests)" -eq 20 ]
    [ "$(nginx_resumed)" -eq 19 ]
    [ -n "$(find "$XDG_RUNTIME_DIR/resumeshim" -name 's-*')" ]
    # without the store, none
    : > "$SLOG"
    for i in $(seq 5); do
        "$ROOT/scripts/resumeshim" --no-store curl -s --cacert "$CA" -o /dev/null "https://localhost:$PORT/"
    done
    [ "$(nginx_requests)" -eq 5 ]
    [ "$(nginx_resumed)" -eq 0 ]
}

@test "python3 -c one-shot fetches, 20 times: nginx resumes 19" {
    start_nginx
    for i in $(seq 20); do
        run stored "$PY" -c "
import ssl, urllib.request
ctx = ssl.create_default_context(cafile='$CA')
print(urllib.request.urlopen('https://localhost:$PORT/', context=ctx).status)"
        assert_success
        assert_output 200
    done
    [ "$(nginx_requests)" -eq 20 ]
    [ "$(nginx_resumed)" -eq 19 ]
}

@test "TLS 1.2 one-shot processes resume through the store" {
    start_psk --tls12
    for i in $(seq 10); do
        run stored "$CLIENT" --cafile "$CA" --sni localhost "$PORT"
        assert_success
    done
    [ "$(connections)" -eq 10 ]
    [ "$(resumed)" -eq 9 ]
}

@test "a process making many connections serves itself from memory: the store is locked three times, not per connection" {
    start_psk
    # the kernel's record of the store's locks and renames
    run strace -f -qq -o "$BATS_TEST_TMPDIR/trace" -e trace=flock,rename,renameat,renameat2 \
        env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" "$CLIENT" --cafile "$CA" --n 100 "$PORT"
    assert_success
    assert_output "reused=99 of=100 failed=0"
    # the first connection, which finds nothing in memory, its first ticket,
    # written as it arrives (a process may never exit cleanly), and the
    # exit that leaves what is left to the store
    assert_equal "$(grep -c 'flock(.*LOCK_EX' "$BATS_TEST_TMPDIR/trace")" 3
    [ "$(grep -c 'rename' "$BATS_TEST_TMPDIR/trace")" -le 3 ]
    # which the next process resumes from
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run offered_twice
    assert_output ""
    [ "$(resumed)" -eq 100 ]
}

@test "8 processes at once: no TLS 1.3 ticket is offered twice, across processes" {
    start_psk --tickets 2
    stored "$CLIENT" --cafile "$CA" --n 4 "$PORT"
    local pids=() i
    for i in $(seq 8); do
        stored "$CLIENT" --cafile "$CA" --n 6 --quiet "$PORT" > "$BATS_TEST_TMPDIR/out.$i" &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    cat "$BATS_TEST_TMPDIR"/out.*
    [ "$(grep -c 'failed=0' "$BATS_TEST_TMPDIR"/out.*  | grep -c ':1$')" -eq 8 ]
    [ "$(connections)" -eq 52 ]
    run offered_twice
    assert_output ""
    # each process finds tickets the others left: most connections resume
    [ "$(resumed)" -ge 40 ]
}

@test "the peer chain survives a resumption from the store (curl %{certs})" {
    # a server certificate under an intermediate, so the chain has two
    local d="$BATS_TEST_TMPDIR/chain"
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=root \
        -keyout "$d/root.key" -out "$d/root.pem" -days 2 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=inter \
        -keyout "$d/inter.key" -out "$d/inter.csr" 2>/dev/null
    printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' > "$d/ca.ext"
    openssl x509 -req -in "$d/inter.csr" -CA "$d/root.pem" -CAkey "$d/root.key" \
        -CAcreateserial -extfile "$d/ca.ext" -days 2 -out "$d/inter.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/leaf.key" -out "$d/leaf.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\n' > "$d/leaf.ext"
    openssl x509 -req -in "$d/leaf.csr" -CA "$d/inter.pem" -CAkey "$d/inter.key" \
        -CAcreateserial -extfile "$d/leaf.ext" -days 2 -out "$d/leaf.pem" 2>/dev/null
    cat "$d/leaf.pem" "$d/inter.pem" > "$d/full.pem"
    local n="$BATS_TEST_TMPDIR/nginx"
    mkdir -p "$n"
    nginx_start "$n" "$d/full.pem" "$d/leaf.key"
    echo "$NGINX_PID" >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PORT"
    local want
    want=$(curl -s --cacert "$d/root.pem" -o /dev/null -w '%{certs}' "https://localhost:$PORT/")
    [ "$(grep -c 'BEGIN CERTIFICATE' <<< "$want")" -eq 2 ]
    for i in 1 2 3; do
        run stored_curl -sS --cacert "$d/root.pem" -o /dev/null -w '%{certs}' "https://localhost:$PORT/"
        assert_success
        assert_output "$want"
    done
    [ "$(nginx_resumed)" -eq 2 ]
}

@test "the store is private: 0700 directory, 0600 files, no host name in clear" {
    start_psk
    stored "$CLIENT" --cafile "$CA" --sni localhost --n 2 "$PORT"
    [ "$(stat -c %a "$STORE")" = 700 ]
    [ -n "$(entries)" ]
    [ -z "$(find "$STORE" -type f ! -perm 600)" ]
    run grep -rl -e localhost -e 127.0.0.1 "$STORE"
    assert_failure
}

@test "a directory of another user, or writable by others, is refused with one warning" {
    start_psk
    mkdir -m 0777 "$STORE"
    run stored "$CLIENT" --cafile "$CA" --n 3 "$PORT"
    assert_success
    assert_output --partial "reused=2 of=3 failed=0"
    assert_output --partial "RESUMESHIM_STORE"
    [ "$(grep -c 'not private' <<< "$output")" -eq 1 ]
    [ -z "$(ls -A "$STORE")" ]
    chmod 0700 "$STORE"
    chown nobody "$STORE"
    run stored "$CLIENT" --cafile "$CA" --n 3 "$PORT"
    assert_success
    assert_output --partial "reused=2 of=3 failed=0"
    [ "$(grep -c 'not private' <<< "$output")" -eq 1 ]
    [ -z "$(ls -A "$STORE")" ]
}

# mine DIR: a private directory of the user's own files, with the names
# the store gives its own; snapshot DIR: every file's name, type, mode,
# size, time and bytes, and the directory's own (which changes when a file
# is added or removed).
mine() {
    mkdir -m 0700 "$1"
    printf 'my notes\n' > "$1/s-notes.txt"
    printf 'scratch\n' > "$1/tmp"
    printf 'pepper\n' > "$1/salt"
    : > "$1/lock"
    printf 'resumeshim-ticket-keys 1\nnot yours\n' > "$1/ticket-keys"
    printf '# notes\n' > "$1/notes.md"
    chmod 0600 "$1"/*
    # an entry by the store's own naming, as a file of the user's
    printf 'resumeshim-store 1\nserver %s\n' "$(printf x | sha256sum | cut -c1-64)" \
        > "$1/s-$(printf y | sha256sum | cut -c1-64)"
    chmod 0600 "$1"/s-*
    touch -d '2020-01-01' "$1"/* "$1"
}
snapshot() {
    (cd "$1" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort &&
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

@test "a directory of the user's files is never changed, in client or server mode; one warning" {
    local d="$BATS_TEST_TMPDIR/mine" before i
    mine "$d"
    before=$(snapshot "$d")
    start_psk --tickets 2
    for i in $(seq 5); do
        run env RESUMESHIM_STORE="$d" LD_PRELOAD="$PRELOAD" "$CLIENT" --cafile "$CA" --n 3 "$PORT"
        assert_success
        # the program runs on, with sessions in memory
        assert_output --partial "reused=2 of=3 failed=0"
        [ "$(grep -c 'RESUMESHIM_STORE' <<< "$output")" -eq 1 ]
        assert_output --partial "$d holds files and no resumeshim-store file"
    done
    # a relative name, and the command, which defaults the store on
    (cd "$d" && RESUMESHIM_STORE=. LD_PRELOAD="$PRELOAD" "$CLIENT" --cafile "$CA" --n 3 "$PORT")
    run "$ROOT/scripts/resumeshim" --store "$d" "$CLIENT" --cafile "$CA" --n 3 "$PORT"
    assert_output --partial "reused=2 of=3 failed=0"
    run "$ROOT/scripts/resumeshim" --store "$d" clear
    assert_failure 1
    assert_output --partial "not a store"
    run "$ROOT/scripts/resumeshim" --store "$d" list
    assert_failure 1
    # the server mode, whose key file would be the store's ticket-keys:
    # servers started twice, each resuming on keys of its own
    local sd="$BATS_TEST_TMPDIR/server" port
    mkdir "$sd"
    for i in 1 2; do
        RESUMESHIM_SERVER=1 RESUMESHIM_STORE="$d" LD_PRELOAD="$PRELOAD" "$PSKSERVER" \
            --cert "$CERT" --key "$KEY" --port-file "$sd/port.$i" --log "$sd/log.$i" \
            --ctx-per-conn 2> "$sd/err.$i" 3>&- &
        echo $! >> "$BATS_TEST_TMPDIR/pids"
        local j
        for j in $(seq 100); do [ -s "$sd/port.$i" ] && break; sleep 0.05; done
        port=$(cat "$sd/port.$i")
        run env RESUMESHIM_STORE="$d" LD_PRELOAD="$PRELOAD" "$CLIENT" --cafile "$CA" --n 4 "$port"
        assert_output --partial "reused=3 of=4 failed=0"
        [ "$(grep -c 'resumed=1' "$sd/log.$i")" -eq 3 ]
        [ "$(grep -c 'RESUMESHIM_STORE' "$sd/err.$i")" -eq 1 ]
    done
    assert_equal "$(snapshot "$d")" "$before"
}

@test "an empty directory becomes the store, marked as its own" {
    mkdir -m 0700 "$STORE"
    start_psk
    stored "$CLIENT" --cafile "$CA" "$PORT"
    [ -f "$STORE/resumeshim-store" ]
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
    # without its mark, a store is the user's directory again: left alone
    rm "$STORE/resumeshim-store"
    before=$(snapshot "$STORE")
    run stored "$CLIENT" --cafile "$CA" --n 2 "$PORT"
    assert_output --partial "reused=1 of=2 failed=0"
    assert_output --partial "not a store"
    assert_equal "$(snapshot "$STORE")" "$before"
}

@test "a store directory others can read (0755, 0750, 0701) is refused with one warning, left as it is" {
    start_psk
    local m
    for m in 755 750 701; do
        rm -rf "$STORE"
        mkdir -m "$m" "$STORE"
        run stored "$CLIENT" --cafile "$CA" --n 3 "$PORT"
        assert_success
        assert_output --partial "reused=2 of=3 failed=0"
        [ "$(grep -c 'RESUMESHIM_STORE' <<< "$output")" -eq 1 ]
        assert_output --partial "$STORE is not private (owner uid 0, mode $m;"
        [ -z "$(ls -A "$STORE")" ]
        [ "$(stat -c %a "$STORE")" = "$m" ]
    done
    # at 0700 it is the store's
    chmod 0700 "$STORE"
    stored "$CLIENT" --cafile "$CA" "$PORT"
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
}

@test "a store file others could read or write is refused, not used" {
    start_psk
    stored "$CLIENT" --cafile "$CA" "$PORT"
    chmod 0644 "$(entries)"
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_success
    assert_output --partial "failed=0"
    assert_output --partial "not private"
    [ "$(resumed)" -eq 0 ]
}

@test "a truncated, random, or other-version store file is rebuilt, and the command succeeds" {
    start_psk
    local f damage
    for damage in truncate random version empty; do
        stored "$CLIENT" --cafile "$CA" "$PORT"
        f=$(entries)
        case $damage in
            truncate) truncate -s 150 "$f" ;;
            random) head -c 3000 /dev/urandom > "$f" ;;
            version) sed -i '1s/.*/resumeshim-store 0/' "$f" ;;
            empty) : > "$f" ;;
        esac
        run stored "$CLIENT" --cafile "$CA" "$PORT"
        assert_success
        assert_output "reused=0 of=1 failed=0"
        # rebuilt: the next process resumes from what the last one left
        run stored "$CLIENT" --cafile "$CA" "$PORT"
        assert_output "reused=1 of=1 failed=0"
        [ "$(head -1 "$(entries)")" = "resumeshim-store 1" ]
    done
    # a damaged salt starts the store afresh
    head -c 50 /dev/urandom > "$STORE/salt"
    run stored "$CLIENT" --cafile "$CA" --n 2 "$PORT"
    assert_output "reused=1 of=2 failed=0"
    [ "$(entries | wc -l)" -eq 1 ]
}

@test "processes killed with SIGKILL while using the store leave one the next can use" {
    start_psk
    stored "$CLIENT" --cafile "$CA" "$PORT"
    local i
    for i in $(seq 12); do
        stored "$CLIENT" --cafile "$CA" --n 400 --quiet "$PORT" > /dev/null &
        sleep "0.$((RANDOM % 3 + 1))"
        kill -KILL $! 2>/dev/null || true
        wait $! 2>/dev/null || true
    done
    # a half-written next version, as a process killed inside write() leaves
    printf 'resumeshim-store 1\nserver ab' > "$STORE/tmp"
    # (the killed processes may have taken every ticket there was)
    run stored "$CLIENT" --cafile "$CA" --n 3 "$PORT"
    assert_success
    assert_output --regexp "^reused=[23] of=3 failed=0$"
    [ "$(head -1 "$(entries)")" = "resumeshim-store 1" ]
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
}

@test "bounded: RESUMESHIM_MAX_HOSTS servers, RESUMESHIM_POOL_SIZE tickets each" {
    start_psk --tickets 4
    RESUMESHIM_MAX_HOSTS=3 RESUMESHIM_POOL_SIZE=2 \
        stored "$CLIENT" --cafile "$CA" --snis a.test,b.test,c.test,d.test,e.test --n 20 "$PORT"
    [ "$(entries | wc -l)" -eq 3 ]
    local f
    for f in $(entries); do
        [ "$(grep -c '^tls1.3 ' "$f")" -le 2 ]
    done
    # the store holds what the last three servers left
    run stored "$CLIENT" --cafile "$CA" --sni e.test "$PORT"
    assert_output "reused=1 of=1 failed=0"
}

@test "expired sessions are dropped when met, never offered" {
    start_psk
    stored "$CLIENT" --cafile "$CA" --n 3 "$PORT"
    [ "$(grep -c '^tls1' "$(entries)")" -ge 1 ]
    run env FAKETIME=+2h LD_PRELOAD="/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 $SHIM" \
        RESUMESHIM_STORE="$STORE" "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=0 of=1 failed=0"
    [ "$(offers)" -eq 2 ]
    # what that process found had expired; it kept only what it earned
    local later=$(($(date +%s) + 3600))
    run awk -v t="$later" '/^tls1/ && $2 < t' "$(entries)"
    assert_output ""
}

@test "a program's own kept tickets reach the store at exit" {
    start_psk --tickets 2
    # keeps every ticket in its own cache and never offers them: they are
    # published when it exits
    stored "$CLIENT" --cafile "$CA" --keep "$PORT"
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
}

@test "a ticket the program also saves to a file is the store's too, offered once: by whoever offers it first" {
    # one ticket a connection: each run leaves exactly one
    start_psk --tls13 --tickets 1
    local saved="$BATS_TEST_TMPDIR/saved"
    # keeps each ticket and writes it to a file (as curl --ssl-sessions
    # does), then offers it from the file in its next run: the store's copy
    # leaves the store (and that run publishes nothing: it resumed a
    # session of the program's), so the run after finds none
    stored "$CLIENT" --cafile "$CA" --keep --save "$saved" --n 1 "$PORT"
    run stored "$CLIENT" --cafile "$CA" --load "$saved" --n 1 "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run stored "$CLIENT" --cafile "$CA" --n 1 "$PORT"
    assert_output "reused=0 of=1 failed=0"
    run offered_twice
    assert_output ""
    # another process takes it from the store first: the program, offering
    # it from the file, then offers none of its own, and the shim offers
    # the ticket that process left
    rm -rf "$STORE" "$saved"
    stored "$CLIENT" --cafile "$CA" --keep --save "$saved" --n 1 "$PORT"
    run stored "$CLIENT" --cafile "$CA" --n 1 "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run stored "$CLIENT" --cafile "$CA" --load "$saved" --n 1 "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run offered_twice
    assert_output ""
    assert_equal "$(connections)" 6
    # the same on a connection moved to another context before it is
    # given the saved ticket (SSL_set_SSL_CTX), which the shim offers none
    # of its own tickets
    rm -rf "$STORE" "$saved"
    stored "$CLIENT" --cafile "$CA" --keep --save "$saved" --n 1 "$PORT"
    run stored "$CLIENT" --cafile "$CA" --n 1 "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run stored "$CLIENT" --cafile "$CA" --move-ctx --load "$saved" --n 1 "$PORT"
    assert_output "reused=0 of=1 failed=0"
    run offered_twice
    assert_output ""
}

@test "a saved ticket is offered once across configurations, and however many tickets were taken since" {
    start_psk --tls13 --tickets 1
    local saved="$BATS_TEST_TMPDIR/saved" i
    # offered from the file under another configuration (a host to check:
    # another key) before a run under the saving one, and after one
    stored "$CLIENT" --cafile "$CA" --keep --save "$saved" --n 1 "$PORT"
    run stored "$CLIENT" --cafile "$CA" --verify-host localhost --load "$saved" --n 1 "$PORT"
    assert_output "reused=1 of=1 failed=0"
    run stored "$CLIENT" --cafile "$CA" --n 1 "$PORT"
    assert_output "reused=0 of=1 failed=0"
    rm -rf "$STORE" "$saved"
    stored "$CLIENT" --cafile "$CA" --keep --save "$saved" --n 1 "$PORT"
    # the store takes it first, then nine more tickets, one a run
    for i in $(seq 10); do
        run stored "$CLIENT" --cafile "$CA" --n 1 "$PORT"
        assert_output "reused=1 of=1 failed=0"
    done
    run stored "$CLIENT" --cafile "$CA" --verify-host localhost --load "$saved" --n 1 "$PORT"
    assert_success
    run offered_twice
    assert_output ""
    assert_equal "$(connections)" 15
}

@test "a ticket the program serializes after the shim offered it, keeps by reference, or leaves to a child, is offered once" {
    start_psk --tls13
    local mode out0
    # inherit: the child takes the session of a connection open across the
    # fork; the parent's shim then offered that ticket too
    for mode in getsess upref fork inherit; do
        run timeout 60 "$ROOT/tests/bin/serialclient" $mode "$PORT" "$CA"
        assert_success
        out0=$(grep -c 'ok=1' <<< "$output")
        run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/serialclient" $mode "$PORT" "$CA"
        assert_success
        assert_equal "$mode: $(grep -c 'ok=1' <<< "$output")" "$mode: $out0"
        run stored "$ROOT/tests/bin/serialclient" $mode "$PORT" "$CA"
        assert_success
        assert_equal "$mode: $(grep -c 'ok=1' <<< "$output")" "$mode: $out0"
    done
    run offered_twice
    assert_output ""
    assert_equal "$(connections)" 36
}

@test "a ticket the program takes with SSL_get1_session reaches the store at exit, unless it offered it" {
    # One ticket per handshake: a connection's newest is its only one.
    start_psk --tls13 --tickets 1
    # takes its connection's session (as links2 does, for a cache a one-shot
    # run never uses)
    stored "$CLIENT" --cafile "$CA" --native --n 1 "$PORT"
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=1 of=1 failed=0"
    # offers each taken ticket itself on its next connection: none reaches
    # the store (and the tickets of connections resumed from the program's
    # own sessions are not the shim's to publish), no ticket offered twice
    stored "$CLIENT" --cafile "$CA" --native --n 3 "$PORT"
    run stored "$CLIENT" --cafile "$CA" "$PORT"
    assert_output "reused=0 of=1 failed=0"
    run offered_twice
    assert_output ""
}

@test "resumeshim list shows what real processes left, by name when named; clear empties it" {
    start_psk --tickets 2
    local rs="$ROOT/scripts/resumeshim"
    "$rs" --store "$STORE" "$CLIENT" --cafile "$CA" --sni localhost --n 2 "$PORT"
    run "$rs" --store "$STORE" list "localhost:$PORT"
    assert_success
    assert_output --partial "localhost:$PORT"
    [ "$(grep -c "^localhost:$PORT  *TLSv\?1.3" <<< "$output")" -ge 1 ]
    run "$rs" --store "$STORE" list
    refute_output --partial localhost
    run "$rs" --store "$STORE" clear
    assert_success
    [ -z "$(entries)" ]
    run "$rs" --store "$STORE" "$CLIENT" --cafile "$CA" --sni localhost "$PORT"
    assert_output "reused=0 of=1 failed=0"
}

@test "the store file reader, fuzzed: 400000 damaged files, under ASan and UBSan" {
    run "$ROOT/tests/bin/fuzzstore" 200000 1
    assert_success
    assert_output --regexp '^accepted=[0-9]+ refused=[0-9]+$'
    run "$ROOT/tests/bin/fuzzstore" 200000 "$RANDOM"
    assert_success
}

@test "threads sharing the store run clean under helgrind and memcheck" {
    start_psk --tickets 2
    # valgrind runs the plain build (it cannot run beside AddressSanitizer)
    local vg="timeout 300 valgrind -q --error-exitcode=9 $(vg_supp)"
    RESUMESHIM_STORE="$STORE" LD_PRELOAD="$SHIM" run $vg --tool=helgrind \
        "$CLIENT" --cafile "$CA" --threads 4 --n 8 "$PORT"
    assert_success
    assert_output --partial "of=32 failed=0"
    RESUMESHIM_STORE="$STORE" LD_PRELOAD="$SHIM" run $vg --leak-check=full \
        --errors-for-leak-kinds=definite "$CLIENT" --cafile "$CA" --threads 2 --n 10 --keep "$PORT"
    assert_success
    assert_output --partial "of=20 failed=0"
    # a program that keeps its own tickets: what it kept went to the store
    # at exit
    [ -n "$(entries)" ]
    run offered_twice
    assert_output ""
}

@test "a server restarted with new ticket keys: the stale tickets cost one refusal, then it resumes" {
    start_psk --tickets 2
    stored "$CLIENT" --cafile "$CA" --n 4 "$PORT"
    local port=$PORT old
    old=$(cat "$BATS_TEST_TMPDIR/pids")
    kill $old
    wait $old 2>/dev/null || true
    rm "$BATS_TEST_TMPDIR/pids"
    # the same port, new keys: every stored ticket is now stale
    local d="$BATS_TEST_TMPDIR/restart" i
    mkdir -p "$d"
    SLOG="$d/log"
    "$PSKSERVER" --cert "$CERT" --key "$KEY" --port "$port" --tickets 2 --log "$SLOG" 3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$port"
    run stored "$CLIENT" --cafile "$CA" --n 10 "$port"
    assert_success
    assert_output "reused=9 of=10 failed=0"
    # (wait_port's probe shows as one failed connection)
    [ "$(grep -c 'status=ok' "$SLOG")" -eq 10 ]
    [ "$(resumed)" -eq 9 ]
}

@test "an entry that cannot be rewritten: a taken ticket still leaves the store, never offered twice" {
    start_psk --tickets 2
    stored "$CLIENT" --cafile "$CA" "$PORT"
    # anything that makes the rewrite fail (a full file system): tmp is a directory
    mkdir "$STORE/tmp"
    local i
    for i in 1 2 3; do
        run stored "$CLIENT" --cafile "$CA" "$PORT"
        assert_success
        assert_output --partial "failed=0"
    done
    run offered_twice
    assert_output ""
}

@test "a full file system: a write cut short leaves no tmp file of secrets, and costs no connection" {
    local fs="$BATS_TEST_TMPDIR/small" i
    mount_small "$fs" 64k
    STORE="$fs/store"
    # tickets of about 6 KB: every entry is more than a page
    start_psk --big-tickets 6000
    run stored "$CLIENT" --cafile "$CA" --sni a.test --n 2 "$PORT"
    assert_output "reused=1 of=2 failed=0"
    [ "$(entries | wc -l)" -eq 1 ]
    # full but for one page: the next version of an entry is cut short
    dd if=/dev/zero of="$fs/fill" bs=4k 2> /dev/null || true
    truncate -s -4096 "$fs/fill"
    [ "$(stat -f -c %a "$fs")" -eq 1 ]
    for i in b c d e; do
        run stored "$CLIENT" --cafile "$CA" --sni "$i.test" --n 2 "$PORT"
        assert_success
        assert_output --partial "reused=1 of=2 failed=0"
        # the new server's entry could not be written, and nothing is left
        [ "$(entries | wc -l)" -eq 1 ]
        [ ! -e "$STORE/tmp" ]
        [ "$(stat -f -c %a "$fs")" -eq 1 ]
    done
}

@test "a fork while a thread holds the store's lock: no child keeps it" {
    start_psk --tickets 2
    run stored "$ROOT/tests/bin/lifecycle" fork "$PORT" "$STORE/lock"
    assert_success
    assert_output --regexp "^lock=free children_with_store_files=0 connections=[0-9]+$"
    [ "$(sed 's/.*connections=//' <<< "$output")" -ge 20 ]
}

@test "a connection freed by an exit handler after the shim's: its ticket is stored once" {
    start_psk --tickets 2
    run stored "$ROOT/tests/bin/lifecycle" exit-free "$PORT" "$CA"
    assert_output "reused=0"
    local i
    for i in 1 2 3; do
        stored "$CLIENT" --cafile "$CA" --reject "$PORT"
    done
    run offered_twice
    assert_output ""
}

@test "starting the shim and its store leaves the program's errno alone" {
    run stored "$ROOT/tests/bin/lifecycle" errno
    assert_output "errno=0"
    run stored "$ROOT/tests/bin/lifecycle" errno
    assert_output "errno=0"
}

@test "a program that neither shuts down nor frees its connection, and ends in _exit (apt's https method): every run after the first resumes" {
    # A resumed handshake earns one ticket, its connection's newest: it
    # reaches the store once earned, exit handler or not.
    start_psk --tls13
    local i
    for i in $(seq 10); do
        run stored "$CLIENT" --no-free --exit-now --cafile "$CA" --sni localhost "$PORT"
        assert_success
    done
    assert_equal "$(resumed)" 9
    assert_equal "$(offered_twice)" ""
}

@test "tickets a program serializes and saves for its next run: each accepted once, and the program resumes as without the shim, with the store and without" {
    start_psk --tls13
    local d="$BATS_TEST_TMPDIR" run plain differs=""
    # without the shim, then under it without a store, then with one: each
    # run offers every ticket the last one saved, then two connections
    # offer none
    for run in 1 2; do
        run timeout 60 "$ROOT/tests/bin/serialclient" persist "$PORT" "$CA" "$d/plain"
        assert_success
        plain=$output
        run env LD_PRELOAD="$PRELOAD" timeout 60 "$ROOT/tests/bin/serialclient" persist "$PORT" "$CA" "$d/shim"
        assert_success
        [ "$output" = "$plain" ] || differs+="run $run without a store: $output"$'\n'
        run stored "$ROOT/tests/bin/serialclient" persist "$PORT" "$CA" "$d/stored"
        assert_success
        [ "$output" = "$plain" ] || differs+="run $run with the store: $output"$'\n'
    done
    run offered_twice
    assert_output ""
    assert_equal "$differs" ""
    # the second run's saved tickets all resumed
    assert_equal "$(grep -c 'saved: ok=1 reused=1' <<< "$plain")" "$(grep -c 'saved:' <<< "$plain")"
    [ "$(grep -c 'saved:' <<< "$plain")" -ge 2 ]
}

# most_offered: how many ClientHellos offered the identity offered most.
most_offered() {
    sed -n 's/.*offered=//p' "$SLOG" | grep -v '^-$' | sort | uniq -c | sort -rn | awk 'NR==1{print $1}'
}

@test "a program's own ticket offered on many connections (curl -Z) stays its own through the store: each offer reaches the server" {
    start_psk --tls13
    # keeps its first connection's session and sets it on the five later
    # ones: the server sees that one identity five times
    run client --tls13 --native-first --n 6 "$PORT"
    assert_output "reused=5 of=6 failed=0 resumable=1"
    assert_equal "$(most_offered)" 5
    rm -rf "$STORE"
    local i
    for i in 1 2; do
        : > "$SLOG"
        run stored "$CLIENT" --tls13 --native-first --n 6 "$PORT"
        assert_output --regexp "^reused=[56] of=6 failed=0 resumable=1$"
        assert_equal "run $i: $(most_offered)" "run $i: 5"
        local r=${output#reused=}
        assert_equal "$(resumed)" "${r%% *}"
    done
}
