# Shared by the bats suites: certificates, servers on 127.0.0.1 (started and
# stopped by the tests), and counting what the servers saw.
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
SHIM="$ROOT/libresumeshim.so"
# What the tests preload: the shim, or (make test-asan) libasan and the
# sanitized build.
PRELOAD="${SHIM_PRELOAD:-$SHIM}"
CLIENT="$ROOT/tests/bin/client"
PSKSERVER="$ROOT/tests/bin/pskserver"
PY=/usr/bin/python3

source "$ROOT/scripts/servers.sh"

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    export CA CERT KEY
}

# start_psk [pskserver options]: the tests' own server, which logs the
# identities each ClientHello offered. Sets PORT and SLOG.
start_psk() {
    local d
    d=$(mktemp -d "$BATS_TEST_TMPDIR/psk.XXXX")
    SLOG="$d/log"
    "$PSKSERVER" --cert "$CERT" --key "$KEY" --port-file "$d/port" --log "$SLOG" "$@" \
        3>&- &
    echo $! >> "$BATS_TEST_TMPDIR/pids"
    local i
    for i in $(seq 100); do
        [ -s "$d/port" ] && break
        sleep 0.05
    done
    PORT=$(cat "$d/port")
    export PORT SLOG
}

# start_nginx [extra server directives]: sets PORT and SLOG.
start_nginx() {
    local d
    d=$(mktemp -d "$BATS_TEST_TMPDIR/nginx.XXXX")
    nginx_start "$d" "$CERT" "$KEY" "${1:-}"
    echo "$NGINX_PID" >> "$BATS_TEST_TMPDIR/pids"
    export PORT SLOG
}

teardown() {
    if [ -f "$BATS_TEST_TMPDIR/pids" ]; then
        xargs -r kill < "$BATS_TEST_TMPDIR/pids" 2>/dev/null || true
        rm -f "$BATS_TEST_TMPDIR/pids"
    fi
    # File systems a test mounted (lazily: a server just killed may still
    # hold a file there).
    if [ -f "$BATS_TEST_TMPDIR/mounts" ]; then
        local m
        while read -r m; do umount -l "$m" || true; done < "$BATS_TEST_TMPDIR/mounts"
        rm -f "$BATS_TEST_TMPDIR/mounts"
    fi
}

# mount_small DIR SIZE: a tmpfs of SIZE on DIR (made), unmounted by teardown.
mount_small() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2,mode=0700" tmpfs "$1"
    echo "$1" >> "$BATS_TEST_TMPDIR/mounts"
}

# What the servers saw.
resumed() { grep -c 'resumed=1' "$SLOG" || true; }
connections() { grep -c '^conn=' "$SLOG" || true; }
nginx_resumed() { nginx_requests > /dev/null; grep -c '^r ' "$SLOG" || true; }
# nginx writes its log line after the response, which the client may
# already have read: wait (up to 2 s) for the count to settle.
nginx_requests() {
    local n prev=-1 i
    for i in $(seq 20); do
        n=$(wc -l < "$SLOG")
        [ "$n" = "$prev" ] && break
        prev=$n
        sleep 0.1
    done
    echo "$n"
}
# TLS 1.3 tickets offered in more than one ClientHello (TLS 1.2 sessions,
# logged as t: or s:, may be resumed many times).
offered_twice() {
    sed -n 's/.*offered=//p' "$SLOG" | tr ',' '\n' | grep -v '^-$\|:' | sort | uniq -d
}
offers() { sed -n 's/.*offered=//p' "$SLOG" | grep -vc '^-$' || true; }

# Runs the test client; with_shim does so under the shim.
client() { timeout 120 "$CLIENT" "$@"; }
with_shim() { LD_PRELOAD="$PRELOAD" timeout 120 "$@"; }

# The C client keeps its first connection's session and sets it on three
# later ones, without and with the shim: all three resume either way, TLS
# 1.3 and 1.2, as the server the caller started ($PORT, $SLOG) logs it.
one_session_thrice() {
    local v
    for v in --tls13 --tls12; do
        : > "$SLOG"
        run client "$v" --native-first --n 4 "$PORT"
        assert_output "reused=3 of=4 failed=0 resumable=1"
        run with_shim "$CLIENT" "$v" --native-first --n 4 "$PORT"
        assert_output "reused=3 of=4 failed=0 resumable=1"
        assert_equal "$(resumed)" 6
    done
}

# verified FEATURE: whether the shim was verified on the release of
# FEATURE's library that runs here (a line of shim/core/verified.def, whose
# first line names the library and the releases), as the library's own
# command tells it.
verified() {
    local line lib releases release
    line=$(grep "^VERIFIED($1," "$ROOT/shim/core/verified.def") || return 2
    lib=$(cut -d'"' -f2 <<< "$line")
    releases=$(cut -d'"' -f4 <<< "$line")
    case $lib in
    OpenSSL) release=$(openssl version | cut -d' ' -f2) ;;
    GnuTLS) release=$(gnutls-cli --version | sed -n '1s/^gnutls-cli //p') ;;
    esac
    [[ " $releases " == *" $(cut -d. -f1,2 <<< "$release") "* ]]
}

# php_deepbinds: whether PHP's curl extension reaches libssl past a preloaded
# library, as the loader tells it: PHP 8.2 loads its extensions with
# RTLD_DEEPBIND, 8.4 does not (libcurl binds its symbols at load).
php_deepbinds() {
    local f="$BATS_TEST_TMPDIR/ld-php"
    rm -f "$f".*
    LD_PRELOAD="$SHIM" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$f" php -r 'curl_init();' > /dev/null 2>&1
    grep -q "binding file .*libcurl.* to .*libssl\.so\.3.*symbol .SSL_connect'" "$f".*
}

# vg_supp: what valgrind is told to leave out on this OpenSSL
# (tests/helgrind.supp: OpenSSL 3.5's own accesses; none on 3.0).
vg_supp() {
    [ "$(openssl version | cut -d' ' -f2 | cut -d. -f1,2)" = 3.0 ] ||
        echo "--suppressions=$ROOT/tests/helgrind.supp"
}
