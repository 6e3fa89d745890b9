#!/usr/bin/env bats
# Debian's programs built on GnuTLS, unmodified, each run once per request
# (one TLS connection each) against nginx on 127.0.0.1: N times without the
# shim, then N times through the resumeshim command with a store. nginx's
# log says which connections resumed; every run must print byte for byte
# what the program printed without the shim, and exit 0.
# examples/tested-programs.md has these rows.

load helpers
load gnutls

N=10

setup() {
    STORE="$BATS_TEST_TMPDIR/store"
}

# Connections as nginx logged them (the first request of each): all, and
# those that resumed; with a protocol, those of that protocol only.
conns_logged() {
    nginx_requests > /dev/null
    awk -v p="${1:-}" '$2 == 1 && (p == "" || $4 == p)' "$CLOG" | wc -l
}
conns_resumed() { nginx_requests > /dev/null; awk '$2 == 1 && $3 == "r"' "$CLOG" | wc -l; }

# runs PROTOCOL CMD...: CMD N times without the shim, then N times through
# `resumeshim --store`; every run exits 0 and prints what the first did.
# nginx must log N connections of PROTOCOL each time, 0 resumed without the
# shim, N-1 with it (or $WITH).
runs() {
    local proto="$1" ref="$BATS_TEST_TMPDIR/ref" out="$BATS_TEST_TMPDIR/out" i rc
    local with=${WITH:-$((N - 1))}
    shift
    rm -rf "$STORE"
    : > "$SLOG"
    : > "$CLOG"
    timeout 60 "$@" > "$ref" || fail "without the shim: exit $?"
    [ -s "$ref" ] || fail "without the shim: nothing printed"
    for i in $(seq 2 "$N"); do
        rc=0
        timeout 60 "$@" > "$out" || rc=$?
        assert_equal "without the shim, run $i: exit $rc" "without the shim, run $i: exit 0"
        cmp "$ref" "$out" || fail "without the shim, run $i printed otherwise"
    done
    assert_equal "$(conns_logged "$proto")" "$N"
    assert_equal "$(conns_resumed)" 0
    : > "$SLOG"
    : > "$CLOG"
    for i in $(seq "$N"); do
        rc=0
        timeout 60 "$ROOT/scripts/resumeshim" --store "$STORE" "$@" > "$out" || rc=$?
        assert_equal "with the shim, run $i: exit $rc" "with the shim, run $i: exit 0"
        cmp "$ref" "$out" || fail "with the shim, run $i printed otherwise: $(diff "$ref" "$out")"
    done
    assert_equal "$(conns_logged "$proto")" "$N"
    assert_equal "$(conns_resumed)" "$with"
}

# The programs' own settings, and a home of their own (lynx and elinks
# read and write their configuration there).
home() { echo "HOME=$BATS_TEST_TMPDIR"; }

@test "wget (Debian's, GnuTLS), one process per request, TLS 1.3 and TLS 1.2" {
    start_nginx_git
    runs TLSv1.3 wget -q -O - --ca-certificate="$CA" "$PAGE_URL"
    grep -q 'resumeshim page' "$BATS_TEST_TMPDIR/ref"
    # --secure-protocol only sets a minimum: a GnuTLS priority string pins
    # the version.
    runs TLSv1.2 wget -q -O - --ca-certificate="$CA" --ciphers='NORMAL:-VERS-ALL:+VERS-TLS1.2' \
        "$PAGE_URL"
}

@test "libsoup (glib-networking), one process per request, with and without exit handlers" {
    # glib-networking takes every TLS 1.3 ticket in a handshake hook for a
    # cache a one-shot program never offers from; the first of each run is
    # in the store already, and stays there even if the process ends in
    # _exit. By name: to 127.0.0.1, glib-networking 2.80 (Debian 13)
    # resumed nothing under the shim (measured), 2.74 (Debian 12) 9 of 10.
    start_nginx_git
    local e
    for e in "" exit-now; do
        runs TLSv1.3 /usr/bin/python3 "$ROOT/tests/programs/py_soup.py" "$LYNX_URL" "$CA" $e
        grep -q '^200 ' "$BATS_TEST_TMPDIR/ref"
    done
}

@test "wget, one process per request, against a server accepting TLS 1.2 only" {
    NGINX_PROTOCOLS=TLSv1.2 start_nginx_git
    runs TLSv1.2 wget -q -O - --ca-certificate="$CA" "$PAGE_URL"
}

@test "lynx -dump, one process per request, TLS 1.3 and TLS 1.2" {
    start_nginx_git
    runs TLSv1.3 env "$(home)" SSL_CERT_FILE="$CA" lynx -dump -nolist "$LYNX_URL"
    grep -q 'resumeshim page' "$BATS_TEST_TMPDIR/ref"
    NGINX_PROTOCOLS=TLSv1.2 start_nginx_git
    runs TLSv1.2 env "$(home)" SSL_CERT_FILE="$CA" lynx -dump -nolist "$LYNX_URL"
}

@test "elinks -dump, verifying the server, one process per request, TLS 1.3 and TLS 1.2" {
    local elinks=(elinks -no-home 1 -no-connect 1 -dump 1
                  -eval 'set connection.ssl.cert_verify = 1'
                  -eval "set connection.ssl.trusted_ca_file = \"$CA\"")
    start_nginx_git
    runs TLSv1.3 env "$(home)" "${elinks[@]}" "$PAGE_URL"
    grep -q 'resumeshim page' "$BATS_TEST_TMPDIR/ref"
    NGINX_PROTOCOLS=TLSv1.2 start_nginx_git
    runs TLSv1.2 env "$(home)" "${elinks[@]}" "$PAGE_URL"
}

# apt's https method never calls gnutls_deinit and is ended by SIGINT,
# whose handler calls _exit: what it earned reaches the store as it
# arrives. (apt-helper's own output holds a transfer rate: the file it
# fetched is what is compared.)
@test "apt's https method (apt-helper download-file: it ends in _exit), one process per request, TLS 1.3 and TLS 1.2" {
    local fetch='rm -f "$1"; /usr/lib/apt/apt-helper -o Acquire::https::CaInfo="$2" \
                 download-file "$3" "$1" > /dev/null 2>&1 && cat "$1"'
    start_nginx_git
    runs TLSv1.3 sh -c "$fetch" sh "$BATS_TEST_TMPDIR/got" "$CA" "$PAGE_URL"
    grep -q 'resumeshim page' "$BATS_TEST_TMPDIR/ref"
    NGINX_PROTOCOLS=TLSv1.2 start_nginx_git
    runs TLSv1.2 sh -c "$fetch" sh "$BATS_TEST_TMPDIR/got" "$CA" "$PAGE_URL"
}

# git-remote-https through libcurl-gnutls, which sets GNUTLS_NO_TICKETS and
# moves the bytes through its own functions: GnuTLS names no socket, and the
# shim keys the connection by the name it sends and the port of the one
# socket the process has.
@test "git ls-remote over HTTPS (libcurl-gnutls), one process per request, TLS 1.3 and TLS 1.2" {
    local url
    start_nginx_git
    url="https://localhost:$PORT/git/repo.git"
    runs TLSv1.3 env "$(home)" GIT_SSL_CAINFO="$CA" git ls-remote "$url"
    grep -q 'refs/heads/main' "$BATS_TEST_TMPDIR/ref"
    NGINX_PROTOCOLS=TLSv1.2 start_nginx_git
    url="https://localhost:$PORT/git/repo.git"
    runs TLSv1.2 env "$(home)" GIT_SSL_CAINFO="$CA" git ls-remote "$url"
}

@test "git ls-remote to https://127.0.0.1: no server name, the address of the socket under libcurl's transport" {
    # An IP address is never sent as a server name (RFC 6066), and libcurl
    # moves the bytes itself.
    start_nginx_git
    runs TLSv1.3 env "$(home)" GIT_SSL_CAINFO="$CA" git ls-remote "$REPO_URL"
    grep -q 'refs/heads/main' "$BATS_TEST_TMPDIR/ref"
}

# in_process PROTOCOL RESUMED CMD...: CMD (one process, N connections)
# without the shim, then under it with no store: the same output, exit 0;
# nginx logs N connections of PROTOCOL, none resumed without the shim,
# RESUMED with it.
in_process() {
    local proto="$1" want="$2" d="$BATS_TEST_TMPDIR" rc
    shift 2
    : > "$SLOG"
    : > "$CLOG"
    rc=0
    timeout 120 "$@" > "$d/out0" || rc=$?
    assert_equal "without the shim: exit $rc" "without the shim: exit 0"
    assert_equal "$(conns_logged "$proto")" "$N"
    assert_equal "$(conns_resumed)" 0
    : > "$SLOG"
    : > "$CLOG"
    rc=0
    LD_PRELOAD="$PRELOAD" timeout 120 "$@" > "$d/out1" || rc=$?
    assert_equal "with the shim: exit $rc" "with the shim: exit 0"
    cmp "$d/out0" "$d/out1" || fail "with the shim it printed otherwise"
    assert_equal "$(conns_logged "$proto")" "$N"
    assert_equal "$(conns_resumed)" "$want"
}

@test "wget, N URLs in one process (a connection each): its own resumption never happens, the shim's does" {
    local urls=() i
    start_nginx_git
    for i in $(seq "$N"); do urls+=("$PAGE_URL"); done
    in_process TLSv1.2 $((N - 1)) wget -q -O - --no-http-keep-alive --ca-certificate="$CA" \
        --ciphers='NORMAL:-VERS-ALL:+VERS-TLS1.2' "${urls[@]}"
    assert_equal "$(grep -c 'resumeshim page' "$BATS_TEST_TMPDIR/out1")" "$N"
    # wget takes each connection's first TLS 1.3 ticket for itself
    # (gnutls_session_get_data2 right after the handshake), which is then
    # its own and never offered in this process; nginx sends two after a
    # full handshake, one after a resumed one: every other connection
    # resumes. (Through the store, one process per request, 9 of 10: a
    # ticket the program took is written there at exit.)
    in_process TLSv1.3 $((N / 2)) wget -q -O - --no-http-keep-alive --ca-certificate="$CA" \
        "${urls[@]}"
}
