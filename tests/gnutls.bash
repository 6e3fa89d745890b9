# Sourced after helpers.bash by the GnuTLS suites: nginx serving a page and a
# bare git repository over dumb HTTPS, and the programs that fetch them.

GNUTLSCLIENT="$ROOT/tests/bin/gnutlsclient"

# make_bare_repo DIR: a bare repository at DIR with one commit on main,
# prepared for dumb HTTP (info/refs and objects/info/packs written out,
# since nginx runs no git hooks and no CGI).
make_bare_repo() {
    local dir="$1" work
    work=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/work.XXXX")
    git init -q -b main "$work"
    printf 'hello\n' > "$work/file"
    git -C "$work" add file
    git -C "$work" -c user.name=t -c user.email=t@t commit -q -m one
    git clone -q --bare "$work" "$dir"
    git -C "$dir" update-server-info
    rm -rf "$work"
}

# start_nginx_git [extra server directives]: nginx on a free port serving
# /index.html (a small page), /git/repo.git/ (a bare repository, dumb HTTP)
# and "ok" elsewhere. Sets PORT, SLOG (one line per request, as
# start_nginx), CLOG (one line per request: nginx's connection serial
# number, the request's number on that connection, whether the session was
# reused, the protocol and the URI), PAGE_URL, LYNX_URL and REPO_URL.
start_nginx_git() {
    local d
    d=$(mktemp -d "$BATS_TEST_TMPDIR/nginx.XXXX")
    make_bare_repo "$d/git/repo.git"
    mkdir -p "$d/www"
    printf '<html><body><p>resumeshim page</p></body></html>\n' > "$d/www/index.html"
    CLOG="$d/conns.log"
    PORT=$(free_port)
    # A server-level access_log replaces nginx_run's, so SLOG is named again.
    local block
    block=$(nginx_server "$PORT" "$CERT" "$KEY" "access_log $d/access.log reuse;
        access_log $CLOG conns;
        location /git/ { root $d; }
        location = /index.html { root $d/www; }
        ${1:-}")
    # NGINX_PROTOCOLS (TLSv1.2, say): the only versions it accepts, for
    # programs that cannot be told to stay below TLS 1.3.
    [ -z "${NGINX_PROTOCOLS:-}" ] ||
        block=${block/ssl_protocols TLSv1.2 TLSv1.3;/ssl_protocols $NGINX_PROTOCOLS;}
    nginx_run "$d" "    log_format conns '\$connection \$connection_requests \$ssl_session_reused \$ssl_protocol \$request_uri';
$block"
    echo "$NGINX_PID" >> "$BATS_TEST_TMPDIR/pids"
    wait_port "$PORT"
    PAGE_URL="https://127.0.0.1:$PORT/index.html"
    # lynx matches the host against DNS names only, never an IP address.
    LYNX_URL="https://localhost:$PORT/index.html"
    REPO_URL="https://127.0.0.1:$PORT/git/repo.git"
    export PORT SLOG CLOG PAGE_URL LYNX_URL REPO_URL
}

# TLS connections that carried at least one request, as nginx logged them
# (a connection closed before its first request is not counted).
tls_connections() { nginx_requests > /dev/null; cut -d' ' -f1 "$CLOG" | sort -u | wc -l; }

# The GnuTLS programs, each fetching URL once, trusting CA (the test CA
# unless given). Each prints what it fetched on stdout. The environment may
# name a system bundle (SSL_CERT_FILE, GIT_SSL_CAINFO), which each of these
# sets over.
fetch_wget() { timeout 60 wget -q -O - --ca-certificate="${2:-$CA}" "$1"; }
fetch_lynx() {
    HOME="$BATS_TEST_TMPDIR" SSL_CERT_FILE="${2:-$CA}" timeout 60 lynx -dump -nolist "$1"
}
# elinks verifies nothing unless told to (connection.ssl.cert_verify is 0).
fetch_elinks() {
    HOME="$BATS_TEST_TMPDIR" timeout 60 elinks -no-home 1 -no-connect 1 -dump 1 \
        -eval 'set connection.ssl.cert_verify = 1' \
        -eval "set connection.ssl.trusted_ca_file = \"${2:-$CA}\"" "$1"
}
# git-remote-https, through libcurl-gnutls: one TLS connection, two
# requests (info/refs, then HEAD). GIT_SSL_CAINFO overrides http.sslCAInfo.
git_ls_remote() {
    HOME="$BATS_TEST_TMPDIR" GIT_SSL_CAINFO="${2:-$CA}" timeout 60 git ls-remote "$1"
}
