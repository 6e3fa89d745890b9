# Shared by the matrix suites: real servers on 127.0.0.1, started once per
# file (setup_file) and stopped by teardown_file, each logging in its own
# words whether a connection resumed. Every server NAME has a port
# ($MX/NAME.port) and a log; srv_reset NAME marks where a test starts and
# srv_count NAME reads what the server logged since.
#
# Server names: nginx (tickets), nginx-stateful (tickets off, a shared
# session cache), nginx-none (no tickets, no cache: never resumes),
# nginx-staple (tickets, a stapled OCSP response), s_server (openssl
# s_server), gnutls (gnutls-serv), haproxy (terminating TLS in front of a
# plain HTTP backend); each with a suffix 13 or 12 for the
# only protocol version it accepts.

MX="$BATS_FILE_TMPDIR"
ALL_SERVERS="nginx13 nginx12 nginx-stateful13 nginx-stateful12 nginx-none13 nginx-none12
             s_server13 s_server12 gnutls13 gnutls12 haproxy13 haproxy12"

# mx_nginx [NAME...]: one nginx, two server blocks (TLS 1.3, TLS 1.2) for
# each NAME (default: nginx nginx-stateful nginx-none). nginx-close is
# nginx closing every connection after one request (keepalive_timeout 0),
# so that a load generator has to reconnect. nginx-staple staples the OCSP
# response in $MX/good.der (make_staple) to the clients that ask for one,
# and sends its certificate with the CA's (which curl --cert-status needs
# to find the response's issuer).
mx_nginx() {
    local blocks="" name v proto extra cert names=("$@")
    [ $# -gt 0 ] || names=(nginx nginx-stateful nginx-none)
    for name in "${names[@]}"; do
        cert=$CERT
        case $name in
            nginx) extra="ssl_session_tickets on;" ;;
            nginx-stateful) extra="ssl_session_tickets off; ssl_session_cache shared:mx:1m;" ;;
            nginx-none) extra="ssl_session_tickets off; ssl_session_cache off;" ;;
            nginx-close) extra="ssl_session_tickets on; keepalive_timeout 0;" ;;
            nginx-staple) extra="ssl_session_tickets on; ssl_stapling on;
                                 ssl_stapling_file $MX/good.der;"
                          cert="$MX/chain.pem"
                          cat "$CERT" "$CA" > "$cert" ;;
        esac
        for v in 13 12; do
            proto="TLSv1.${v#1}"
            free_port > "$MX/$name$v.port"
            echo nginx > "$MX/$name$v.kind"
            : > "$MX/$name$v.log"
            blocks="$blocks
    server {
        listen 127.0.0.1:$(cat "$MX/$name$v.port") ssl;
        access_log $MX/$name$v.log reuse;
        ssl_certificate $cert;
        ssl_certificate_key $KEY;
        ssl_protocols $proto;
        $extra
        location / { return 200 \"ok\\n\"; }
    }"
        done
    done
    mkdir -p "$MX/nginx"
    cat > "$MX/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $MX/nginx/nginx.pid;
error_log $MX/nginx/error.log;
events { worker_connections 512; }
http {
    log_format reuse '\$ssl_session_reused \$ssl_protocol';
    client_body_temp_path $MX/nginx/body;
    proxy_temp_path $MX/nginx/proxy;
    fastcgi_temp_path $MX/nginx/fastcgi;
    uwsgi_temp_path $MX/nginx/uwsgi;
    scgi_temp_path $MX/nginx/scgi;
    $blocks
}
CONF
    nginx -p "$MX/nginx" -c "$MX/nginx/nginx.conf" 3>&- &
    echo $! >> "$MX/pids"
}

# openssl s_server: -state prints its side of every handshake; a resumed
# one writes no certificate.
mx_s_server() {
    local v
    for v in 13 12; do
        free_port > "$MX/s_server$v.port"
        echo s_server > "$MX/s_server$v.kind"
        openssl s_server -accept "127.0.0.1:$(cat "$MX/s_server$v.port")" -cert "$CERT" \
            -key "$KEY" "-tls1_${v#1}" -www -state >> "$MX/s_server$v.log" 2>&1 3>&- < /dev/null &
        echo $! >> "$MX/pids"
    done
}

# gnutls-serv announces "This is a resumed session". It has no option to
# listen on one address only: it takes the port on every interface.
mx_gnutls() {
    local v
    for v in 13 12; do
        free_port > "$MX/gnutls$v.port"
        echo gnutls > "$MX/gnutls$v.kind"
        gnutls-serv --http -p "$(cat "$MX/gnutls$v.port")" --x509certfile "$CERT" \
            --x509keyfile "$KEY" --priority "NORMAL:-VERS-ALL:+VERS-TLS1.${v#1}" \
            >> "$MX/gnutls$v.log" 2>&1 3>&- < /dev/null &
        echo $! >> "$MX/pids"
    done
}

# haproxy terminates TLS and passes plain HTTP to a backend (its own second
# frontend, which answers "ok"); it logs %[ssl_fc_is_resumed] per request.
mx_haproxy() {
    local backend
    backend=$(free_port)
    free_port > "$MX/haproxy13.port"
    free_port > "$MX/haproxy12.port"
    echo haproxy > "$MX/haproxy13.kind"
    echo haproxy > "$MX/haproxy12.kind"
    : > "$MX/haproxy13.log"
    : > "$MX/haproxy12.log"
    cat "$CERT" "$KEY" > "$MX/haproxy.pem"
    cat > "$MX/haproxy.cfg" <<CONF
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend tls13
    bind 127.0.0.1:$(cat "$MX/haproxy13.port") ssl crt $MX/haproxy.pem ssl-min-ver TLSv1.3
    log stdout format raw local0
    log-format "13 %[ssl_fc_is_resumed] %sslv"
    default_backend plain
frontend tls12
    bind 127.0.0.1:$(cat "$MX/haproxy12.port") ssl crt $MX/haproxy.pem ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2
    log stdout format raw local0
    log-format "12 %[ssl_fc_is_resumed] %sslv"
    default_backend plain
backend plain
    server plain 127.0.0.1:$backend
frontend plain
    bind 127.0.0.1:$backend
    http-request return status 200 content-type text/plain string "ok"
CONF
    haproxy -f "$MX/haproxy.cfg" -db >> "$MX/haproxy.out" 2>&1 3>&- < /dev/null &
    echo $! >> "$MX/pids"
}

mx_start_all() {
    mx_nginx nginx nginx-stateful nginx-none
    mx_s_server
    mx_gnutls
    mx_haproxy
    local s
    for s in $ALL_SERVERS; do wait_port "$(cat "$MX/$s.port")"; done
}

mx_stop_all() {
    [ -f "$MX/pids" ] && xargs -r kill < "$MX/pids" 2>/dev/null
    rm -f "$MX/pids"
    return 0
}

srv_port() { cat "$MX/$1.port"; }

# Where server NAME logs. haproxy writes both frontends to one stream (its
# stdout, which it does not keep in append mode: the file cannot be
# emptied under it); each line starts with the frontend's version.
srv_file() {
    case $(cat "$MX/$1.kind") in
        haproxy) echo "$MX/haproxy.out" ;;
        *) echo "$MX/$1.log" ;;
    esac
}

# A test starts counting from here: the log's size now.
srv_reset() {
    local f
    f=$(srv_file "$1")
    wc -c < "$f" > "$MX/$1.mark"
}

# The log lines of server NAME since srv_reset.
srv_log() {
    local f mark=0
    f=$(srv_file "$1")
    [ -f "$MX/$1.mark" ] && mark=$(cat "$MX/$1.mark")
    case $(cat "$MX/$1.kind") in
        haproxy) tail -c "+$((mark + 1))" "$f" | grep -a "^${1#haproxy} " | cut -d' ' -f2- ;;
        *) tail -c "+$((mark + 1))" "$f" ;;
    esac
}

# srv_count NAME: "RESUMED CONNECTIONS" as the server logged them. Servers
# log after answering: wait (up to 2 s) for the log to stop growing.
srv_count() {
    local prev=-1 n _ log
    # a busy machine may not have written the first line yet: up to 10 s
    # for the first, then until the log stops growing
    for _ in $(seq 100); do
        n=$(srv_log "$1" | wc -c)
        [ "$n" = "$prev" ] && [ "$n" -gt 0 ] && break
        prev=$n
        sleep 0.1
    done
    log=$(srv_log "$1")
    local resumed conns full
    case $(cat "$MX/$1.kind") in
        nginx)
            conns=$(grep -c '^[r.] ' <<< "$log" || true)
            resumed=$(grep -c '^r ' <<< "$log" || true) ;;
        s_server)
            conns=$(grep -c 'write server hello$' <<< "$log" || true)
            full=$(grep -c 'SSLv3/TLS write certificate$' <<< "$log" || true)
            resumed=$((conns - full)) ;;
        gnutls)
            conns=$(grep -c '^- Version:' <<< "$log" || true)
            resumed=$(grep -c 'This is a resumed session' <<< "$log" || true) ;;
        haproxy)
            conns=$(grep -c '^[01] ' <<< "$log" || true)
            resumed=$(grep -c '^1 ' <<< "$log" || true) ;;
    esac
    echo "$resumed $conns"
}
