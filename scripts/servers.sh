# Sourced by the demo and the tests: a test CA and server certificate, and
# nginx on a free port of 127.0.0.1 logging whether each session was reused.

# make_certs DIR [DAYS]: DIR/ca.pem, DIR/server.pem, DIR/server.key (ECDSA
# P-256; the server certificate names localhost, 127.0.0.1 and test names).
make_certs() {
    local d="$1" days="${2:-2}"
    # What a strict verifier (Python 3.13's default) asks of a CA and a
    # leaf: the CA's key usage, the leaf's authority key identifier.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3 \
        -subj /CN=resumeshim-test-ca -addext basicConstraints=critical,CA:true \
        -addext keyUsage=critical,keyCertSign,cRLSign \
        -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
        -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,DNS:test.example,DNS:a.test,DNS:b.test,IP:127.0.0.1\n%s\n' \
        'authorityKeyIdentifier=keyid' > "$d/ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
        -days "$days" -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
}

# make_staple DIR STATUS OUT [expired|soon]: DIR/OUT, a DER OCSP response
# for DIR/server.pem giving STATUS (good or revoked), signed by the CA of
# make_certs as its own responder, valid for a day from now, or ("expired")
# made two days ago and past its nextUpdate for a day, or ("soon") made 23
# hours ago and past its nextUpdate in an hour.
make_staple() {
    local d="$1" status="$2" out="$3" serial flag=V revoked="" when=()
    serial=$(openssl x509 -in "$d/server.pem" -noout -serial | cut -d= -f2)
    [ "$status" = good ] || flag=R revoked=$(date -u -d '-1 hour' +%y%m%d%H%M%SZ)
    [ "${4:-}" != expired ] || when=(faketime '2 days ago')
    [ "${4:-}" != soon ] || when=(faketime '23 hours ago')
    printf '%s\t%s\t%s\t%s\tunknown\t/CN=localhost\n' "$flag" \
        "$(date -u -d '+2 days' +%y%m%d%H%M%SZ)" "$revoked" "$serial" > "$d/$out.index"
    "${when[@]}" openssl ocsp -index "$d/$out.index" -rsigner "$d/ca.pem" -rkey "$d/ca.key" \
        -CA "$d/ca.pem" -issuer "$d/ca.pem" -cert "$d/server.pem" -no_nonce -ndays 1 \
        -respout "$d/$out" > /dev/null 2>&1
}

# free_port: a port of 127.0.0.1 nothing listens on, and none handed out
# before in this run (the file $PORTS_TAKEN; under bats, one a run). The
# kernel may hand out a free port again before the first server binds it,
# and nginx, given one port in two server blocks, serves both from the
# first, logging into the first block's log only.
free_port() {
    /usr/bin/python3 - "${PORTS_TAKEN:-${BATS_RUN_TMPDIR:+$BATS_RUN_TMPDIR/ports-taken}}" <<'PY'
import socket, sys
path, held = sys.argv[1], []
try:
    with open(path) as f:
        taken = set(f.read().split())
except OSError:
    taken = set()
while True:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
    port = str(s.getsockname()[1])
    if port not in taken:
        break
if path:
    with open(path, "a") as f:
        f.write(port + "\n")
print(port)
PY
}

wait_port() {
    local i
    for i in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "nothing listens on port $1" >&2
    return 1
}

# nginx_server PORT CERT KEY [directives]: one server block on 127.0.0.1.
nginx_server() {
    cat <<BLOCK
    server {
        listen 127.0.0.1:$1 ssl;
        ssl_certificate $2;
        ssl_certificate_key $3;
        ssl_protocols TLSv1.2 TLSv1.3;
        ${4:-}
        location / { return 200 "ok\n"; }
    }
BLOCK
}

# nginx_run DIR BLOCKS: runs nginx in the background from DIR with these
# server blocks; sets NGINX_PID and SLOG (its access log, one line per
# request: "r" when the session was reused, "." when not, then the
# protocol and the server name asked for).
nginx_run() {
    local d="$1"
    SLOG="$d/access.log"
    cat > "$d/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 512; }
http {
    log_format reuse '\$ssl_session_reused \$ssl_protocol \$ssl_server_name';
    access_log $SLOG reuse;
    client_body_temp_path $d/body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
$2
}
CONF
    nginx -p "$d" -c "$d/nginx.conf" 3>&- &
    NGINX_PID=$!
}

# nginx_start DIR CERT KEY [extra server directives]: one server on a free
# port; sets NGINX_PID, PORT and SLOG, and waits for it to listen.
nginx_start() {
    PORT=$(free_port)
    nginx_run "$1" "$(nginx_server "$PORT" "$2" "$3" "${4:-}")"
    wait_port "$PORT"
}
