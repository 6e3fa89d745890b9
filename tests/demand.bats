#!/usr/bin/env bats
# Trust on demand: a CA file a program has loaded twice in a process is
# indexed, and a later load of the same content gives the store its
# entries only as they are looked up. Every answer must be the one OpenSSL
# gives without the shim: tests/bin/trustload drives a store through the
# same steps without and with the shim and the two transcripts (return
# values, error queues with their file and line, verification results and
# chains, candidates in order, objects in order) must be equal. Each
# script loads the file into two stores first, so that the third load is
# the one on demand.

load helpers

TRUSTLOAD="$ROOT/tests/bin/trustload"

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    FX="$BATS_FILE_TMPDIR/fx"
    mkdir -p "$FX"
    demand_fixtures "$FX" "$CA"
    # the bundle's certificates: the system's and the eight above
    ALL=$(( $(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) + 8 ))
    export CA CERT KEY FX ALL
}

# demand_fixtures DIR CA: the certificates below, and DIR/bundle.pem: the
# system's bundle followed by them (dup1 twice) and the test CA.
demand_fixtures() {
    (
    set -e
    . "$ROOT/tests/pki.bash"
    cd "$1"
    printf '[ca]\nbasicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n%s\n' \
        'subjectKeyIdentifier=hash' > ext
    printf '[leaf]\nsubjectAltName=DNS:localhost\n' >> ext
    # Three CAs of one subject; the leaf is the second's.
    pki_root dup1 /CN=dup-ca; pki_root dup2 /CN=dup-ca; pki_root dup3 /CN=dup-ca
    pki_sign leafdup /CN=leafdup dup2 leaf
    # One intermediate key under two roots, of which only B is trusted; the
    # file has both intermediates, B's first: verification takes the first
    # that fits, and builds its chain to root B.
    pki_root rootA /CN=root-a; pki_root rootB /CN=root-b
    pki_sign intA /CN=cross-int rootA ca int; pki_sign intB /CN=cross-int rootB ca int
    cp int.key intA.key
    pki_sign leafx /CN=leafx intA leaf
    # A CA and its CRL, which revokes one of two leaves.
    pki_root crlca /CN=crl-ca
    pki_sign leafok /CN=leafok crlca leaf; pki_sign leafrev /CN=leafrev crlca leaf
    pki_crl crlca crl.pem leafrev
    # A second CRL (root B's, empty), for files that mix CRLs and
    # certificates: a CRL and the certificate after it share one X509_INFO,
    # and the load adds the certificate first.
    pki_crl rootB crlB.pem
    local sys=/etc/ssl/certs/ca-certificates.crt half
    half=$(( $(grep -c 'END CERTIFICATE' "$sys") / 2 ))
    awk -v n="$half" '{print} /END CERTIFICATE/ && ++c == n {exit}' "$sys" > syshead.pem
    awk -v n="$half" 'p {print} /END CERTIFICATE/ && ++c == n {p=1}' "$sys" > systail.pem
    cat crlB.pem dup1.pem crl.pem rootB.pem crlca.pem "$sys" > mixhead.pem
    cat syshead.pem crlB.pem dup1.pem crl.pem rootB.pem crlca.pem systail.pem > mixmid.pem
    cat "$sys" rootB.pem crl.pem crlB.pem dup1.pem > mixtail.pem
    cat "$sys" crlca.pem crl.pem crlB.pem dup1.pem crl.pem crlB.pem dup1.pem > mixdup.pem
    cat "$sys" crlB.pem dup2.pem crlB.pem dup1.pem > mixdup2.pem
    # A TRUSTED CERTIFICATE whose trust settings reject server authentication.
    pki_root rej /CN=rej-ca
    openssl x509 -in rej.pem -addreject serverAuth -trustout -out rej-trusted.pem
    pki_sign leafrej /CN=leafrej rej leaf
    cat /etc/ssl/certs/ca-certificates.crt dup1.pem dup2.pem dup1.pem rootB.pem intB.pem \
        intA.pem crlca.pem crl.pem rej-trusted.pem "$2" > bundle.pem
    cat rootA.pem bundle.pem > shifted.pem
    # The same certificates and a comment: the same trust.
    { cat bundle.pem; echo "# a comment"; } > commented.pem
    # One byte of one certificate's signature changed: it still parses.
    python3 - <<'PY'
import base64, re
pem = open("bundle.pem").read()
blocks = re.findall(r"-----BEGIN CERTIFICATE-----\n(.*?)-----END CERTIFICATE-----\n", pem, re.S)
der = bytearray(base64.b64decode(blocks[0]))
der[-1] ^= 1
b64 = base64.encodebytes(bytes(der)).decode().replace("\n", "")
lines = "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64)) + "\n"
open("onebyte.pem", "w").write(pem.replace(blocks[0], lines, 1))
PY
    printf -- '-----BEGIN CERTIFICATE-----\nMIIB!!!notbase64\n-----END CERTIFICATE-----\n' > bad.pem
    cat dup1.pem bad.pem > partbad.pem
    # Large enough to be the shim's: a bad block at the end, a key inside.
    cat bundle.pem bad.pem > bigbad.pem
    cat bundle.pem dup1.key > bigkey.pem
    cat dup1.key > keyonly.pem
    : > empty.pem
    )
}

# same STEPS...: trustload without and with the shim; equal transcripts,
# the shim's in $output.
same() {
    run timeout 120 "$TRUSTLOAD" "$@"
    assert_success
    local plain=$output
    run with_shim "$TRUSTLOAD" "$@"
    assert_success
    assert_equal "$output" "$plain"
}

# The two loads that make the third one on demand.
warm() { echo new load "$1" new load "$1"; }

@test "several certificates of one subject: every candidate, in order, a duplicate once" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" certs "$FX/dup1.pem" \
        verify "$FX/leafdup.pem" - issuer "$FX/leafdup.pem" list
    assert_line "certs $FX/dup1.pem: 2"
    assert_line --partial "verify $FX/leafdup.pem: 1 error 0"
}

@test "cross-signed: the same chain is built" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" verify "$FX/leafx.pem" "$FX/intA.pem" \
        certs "$FX/intA.pem" list
    assert_line --partial "verify $FX/leafx.pem: 1 error 0"
    assert_line "certs $FX/intA.pem: 2"
}

@test "CRLs: a revoked leaf is revoked, the other passes" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" crls "$FX/crlca.pem" \
        verify "$FX/leafrev.pem" - crl verify "$FX/leafok.pem" - crl list
    assert_line "crls $FX/crlca.pem: 1"
    assert_line --partial "verify $FX/leafrev.pem: 0 error 23"
    assert_line --partial "verify $FX/leafok.pem: 1 error 0"
}

@test "TRUSTED CERTIFICATE entries keep their trust settings" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" verify "$FX/leafrej.pem" - sslserver \
        certs "$FX/rej.pem" list
    assert_line --partial "verify $FX/leafrej.pem: 0 error 28"
}

@test "certificates the program adds of the same name, before and after the load" {
    # Added before: the store then finds the name at once (get1_certs reads
    # the store before any lookup), so the file's entries of that name must
    # be in already.
    same $(warm "$FX/bundle.pem") new add "$FX/dup3.pem" load "$FX/bundle.pem" \
        certs "$FX/dup1.pem" verify "$FX/leafdup.pem" - new load "$FX/bundle.pem" \
        add "$FX/dup3.pem" add "$FX/dup1.pem" certs "$FX/dup1.pem" list
    assert_line "certs $FX/dup1.pem: 3"
}

@test "a file changed or removed after its load changes nothing" {
    local f="$BATS_TEST_TMPDIR/ca.pem" steps plain
    steps=($(warm "$f") new load "$f" copy "$FX/rootA.pem" "$f" verify "$FX/leafdup.pem" - \
        new load "$f" verify "$FX/leafdup.pem" - rm "$f" certs "$FX/dup1.pem" list)
    cp "$FX/bundle.pem" "$f"
    run timeout 120 "$TRUSTLOAD" "${steps[@]}"
    assert_success
    plain=$output
    cp "$FX/bundle.pem" "$f"
    run with_shim "$TRUSTLOAD" "${steps[@]}"
    assert_success
    assert_equal "$output" "$plain"
    assert_line --partial "verify $FX/leafdup.pem: 1 error 0"
    assert_line --partial "verify $FX/leafdup.pem: 0 error 2"
}

@test "return values and error queues of loads that fail, again and again" {
    local f steps=()
    for f in missing bad partbad keyonly empty bigbad bigkey; do
        steps+=(new load "$FX/$f.pem" new load "$FX/$f.pem" new load "$FX/$f.pem" list)
    done
    same "${steps[@]}" new loadfile "$FX/partbad.pem" new defaults
    assert_line --partial "load $FX/bigbad.pem: 0"
    assert_line --partial "load $FX/bigkey.pem: 1"
    assert_line --partial "load error"
}

@test "every way of reading the store: get1_all_certs, get1_issuer, two loads into one store" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" all new load "$FX/bundle.pem" \
        issuer "$FX/leafdup.pem" load "$FX/bundle.pem" certs "$FX/dup1.pem" list
    assert_line "all: $ALL"
}

@test "the default paths (SSL_CERT_FILE), with the CA directory beside the file" {
    export SSL_CERT_FILE="$FX/bundle.pem"
    same new defaults new defaults new defaults verify "$FX/leafdup.pem" - \
        verify "$FX/leafx.pem" "$FX/intA.pem" certs "$FX/dup1.pem" list
    assert_line --partial "verify $FX/leafdup.pem: 1 error 0"
}

@test "the order of the store's objects, searched since the load or not" {
    # Unsearched, a full load's stack is sorted but for the last object
    # added: the file's last entry, or the program's.
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" list new load "$FX/bundle.pem" \
        add "$FX/dup3.pem" list new load "$FX/bundle.pem" certs "$FX/dup1.pem" \
        add "$FX/dup3.pem" all list
}

@test "the order of the store's objects, in files that mix CRLs and certificates at the head, middle and tail, with duplicates" {
    local f
    for f in mixhead mixmid mixtail mixdup mixdup2; do
        same $(warm "$FX/$f.pem") new load "$FX/$f.pem" list new load "$FX/$f.pem" \
            verify "$FX/leafrev.pem" - crl list
    done
    local script='
import ssl, sys
for i in range(4):
    ctx = ssl.create_default_context(cafile=sys.argv[1])
    if i >= 2:
        print(i, ctx.cert_store_stats(), ctx.get_ca_certs()[-2:])
'
    for f in mixhead mixmid mixtail mixdup mixdup2; do
        run "$PY" -c "$script" "$FX/$f.pem"
        assert_success
        local plain=$output
        run with_shim "$PY" -c "$script" "$FX/$f.pem"
        assert_success
        assert_equal "$output" "$plain"
    done
}

@test "threads: verifications at once on one store load each entry once" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" \
        threads 16 "$FX/leafdup.pem" - threads 16 "$FX/leafx.pem" "$FX/intA.pem" list
    run grep -c "thread: verify .*: 1 error 0" <<< "$output"
    assert_output 32
}

@test "fork: a child goes on from its copy" {
    same $(warm "$FX/bundle.pem") new load "$FX/bundle.pem" certs "$FX/dup1.pem" \
        fork "$FX/leafx.pem" "$FX/intA.pem" list
    assert_line --partial "child verify $FX/leafx.pem: 1 error 0"
    assert_line --partial "parent verify $FX/leafx.pem: 1 error 0"
}

@test "Python: cert_store_stats() and get_ca_certs() as without the shim" {
    local script='
import ssl, sys
for i in range(5):
    ctx = ssl.create_default_context(cafile=sys.argv[1])
    if i >= 2:
        print(i, ctx.cert_store_stats(), len(ctx.get_ca_certs()), ctx.get_ca_certs()[-3:])
'
    run "$PY" -c "$script" "$FX/bundle.pem"
    assert_success
    local plain=$output
    assert_line --partial "{'x509': $ALL, 'crl': 1, 'x509_ca': $ALL} $ALL"
    run with_shim "$PY" -c "$script" "$FX/bundle.pem"
    assert_success
    assert_equal "$output" "$plain"
}

# indexed: the store holds the index of a trust file where trust on demand
# runs on this release, and none where it is off (versions.bats).
indexed() {
    run ls "$1"
    if verified OPENSSL_DEMAND; then
        assert_line --regexp '^t-[0-9a-f]{16}$'
    else
        refute_line --regexp '^t-'
        return 1
    fi
}

# stored STEPS...: trustload without the shim, then twice with the shim and
# the store in $STORE (the first run indexes the file into the store, the
# second takes it on demand from its first load): equal transcripts.
stored() {
    run timeout 120 "$TRUSTLOAD" "$@"
    assert_success
    local plain=$output
    run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 120 "$TRUSTLOAD" "$@"
    assert_success
    assert_equal "$output" "$plain"
    run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" timeout 120 "$TRUSTLOAD" "$@"
    assert_success
    assert_equal "$output" "$plain"
}

@test "with the store: the next process takes the file on demand from its first load" {
    STORE="$BATS_TEST_TMPDIR/store"
    stored new load "$FX/bundle.pem" certs "$FX/dup1.pem" verify "$FX/leafdup.pem" - \
        verify "$FX/leafx.pem" "$FX/intA.pem" crls "$FX/crlca.pem" verify "$FX/leafrev.pem" - crl \
        verify "$FX/leafrej.pem" - sslserver new load "$FX/bundle.pem" list
    assert_line --partial "verify $FX/leafrev.pem: 0 error 23"
    # The index is there, as a file of the store.
    indexed "$STORE" || true
}

@test "with the store: a damaged record, or another content's, is not used" {
    STORE="$BATS_TEST_TMPDIR/store"
    stored new load "$FX/bundle.pem" list
    indexed "$STORE" || return 0
    local rec
    rec=$(ls "$STORE" | grep '^t-')
    # One byte changed in the middle of the record.
    python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//3]^=1; open(p,"wb").write(b)' \
        "$STORE/$rec"
    stored new load "$FX/bundle.pem" certs "$FX/dup1.pem" list
    # The bundle's record under the name of another content's.
    run env RESUMESHIM_STORE="$STORE" LD_PRELOAD="$PRELOAD" "$TRUSTLOAD" new load "$FX/shifted.pem"
    assert_success
    local other
    other=$(ls -t "$STORE" | grep '^t-' | grep -v "$rec" | head -1)
    cp "$STORE/$rec" "$STORE/$other.new" && mv "$STORE/$other.new" "$STORE/$other"
    stored new load "$FX/shifted.pem" certs "$FX/dup1.pem" verify "$FX/leafdup.pem" - list
}

# fetch N CAFILE: N requests from one Python process, each with a default
# context of its own (urllib), to the server on $PORT.
fetch() { with_shim "$PY" "$ROOT/examples/fetch.py" "https://localhost:$PORT/" "$2" "$1"; }

@test "the key: the same bundle in the next process resumes; other certificates share nothing" {
    start_psk --tls13
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    run fetch 4 "$FX/bundle.pem"
    assert_success
    # Contexts 1 and 2 load the file, 3 and 4 take it on demand: every one
    # after the first resumes.
    assert_equal "$(resumed)" 3
    indexed "$RESUMESHIM_STORE" || return 0
    local rec other
    rec=$(ls "$RESUMESHIM_STORE" | grep '^t-')
    : > "$SLOG"
    run fetch 1 "$FX/commented.pem"
    assert_success
    assert_equal "$(resumed)" 1
    # A record of the bundle planted under the name of the other file's
    # (which has the same length): its content differs, so it is not used.
    run env LD_PRELOAD="$PRELOAD" "$TRUSTLOAD" new load "$FX/onebyte.pem"
    other=$(ls -t "$RESUMESHIM_STORE" | grep '^t-' | head -1)
    [ "$other" != "$rec" ]
    cp "$RESUMESHIM_STORE/$rec" "$RESUMESHIM_STORE/$other"
    : > "$SLOG"
    run fetch 4 "$FX/onebyte.pem"
    assert_success
    assert_equal "$(offered_by_first)" "-"
    assert_equal "$(resumed)" 3
}

offered_by_first() { sed -n '1s/.*offered=//p' "$SLOG"; }
