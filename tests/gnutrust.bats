#!/usr/bin/env bats
# A GnuTLS trust list, as GnuTLS keeps it, with and without the shim:
# tests/bin/gnutrust drives a list through the same steps without and with
# the shim, and the two transcripts (the counts loads return, error codes,
# verification status and every step's issuer and CRL, issuers found by
# certificate, by name and by key id, the list's certificates in iteration
# order, OCSP verdicts) must be equal. Each script loads the file twice into
# lists of its own first, as a program run again would, so that a load on
# demand, where the shim does one, is the third. The assertions on single
# lines pin what GnuTLS answers, so that a load that missed a certificate of
# a name, took duplicates once, or reordered the list fails them.

load helpers

GNUTRUST="$ROOT/tests/bin/gnutrust"

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    FX="$BATS_FILE_TMPDIR/fx"
    mkdir -p "$FX"
    gnutrust_fixtures "$FX" "$CA"
    SYS=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
    # The bundle's certificates: the system's and the nine below; two are
    # the same (dup1), which a list holds once but a load counts twice.
    ALL=$(( SYS + 9 ))
    export CA CERT KEY FX SYS ALL
}

# gnutrust_fixtures DIR CA: the certificates below, and DIR/bundle.pem: the
# system's bundle followed by them (dup1 twice) and the test CA.
gnutrust_fixtures() {
    (
    set -e
    . "$ROOT/tests/pki.bash"
    cd "$1"
    printf '[leaf]\nsubjectAltName=DNS:localhost\nauthorityKeyIdentifier=keyid\n' > ext
    printf '[int]\nbasicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n%s\n' \
        'subjectKeyIdentifier=hash' >> ext
    printf '[ocsp]\nextendedKeyUsage=OCSPSigning\n' >> ext
    # Three CAs of one name; the leaf is the second's (its authority key id
    # says which). dup1b: dup1's name and key in another certificate.
    pki_root dup1 /CN=dup-ca; pki_root dup2 /CN=dup-ca; pki_root dup3 /CN=dup-ca
    pki_root dup1b /CN=dup-ca dup1
    pki_sign leafdup /CN=leafdup dup2 leaf
    # dup1's name and key, the name a PrintableString (not a UTF8String),
    # and a leaf of it: GnuTLS compares names as text, within a bucket.
    printf '[req]\ndistinguished_name=dn\nstring_mask=default\nprompt=no\n[dn]\nCN=dup-ca\n' > ps.cnf
    openssl req -x509 -new -config ps.cnf -key dup1.key -days 3 \
        -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign,cRLSign \
        -out dupps.pem 2>/dev/null
    cp dup1.key dupps.key
    pki_sign leafps /CN=leafps dupps leaf
    # One intermediate key under two roots, of which only B is trusted; the
    # file has both intermediates, B's first.
    pki_root rootA /CN=root-a; pki_root rootB /CN=root-b
    pki_sign intA /CN=cross-int rootA int int; pki_sign intB /CN=cross-int rootB int int
    cp int.key intA.key
    pki_sign leafx /CN=leafx intA leaf
    # A CA and its CRL, which revokes one of two leaves; an OCSP response
    # about the other, signed by the CA, with and without its certificate.
    pki_root crlca /CN=crl-ca
    pki_sign leafok /CN=leafok crlca leaf; pki_sign leafrev /CN=leafrev crlca leaf
    pki_crl crlca crl.pem leafrev
    openssl ocsp -issuer crlca.pem -cert leafok.pem -no_nonce -reqout req.der 2>/dev/null
    openssl ocsp -index crlca.index -rsigner crlca.pem -rkey crlca.key -CA crlca.pem \
        -reqin req.der -respout ocsp.der -ndays 1 2>/dev/null
    openssl ocsp -index crlca.index -rsigner crlca.pem -rkey crlca.key -CA crlca.pem \
        -reqin req.der -respout ocsp-nocerts.der -resp_no_certs -ndays 1 2>/dev/null
    # A delegated responder: not in any list, signed by the CA.
    pki_sign responder /CN=responder crlca ocsp
    openssl ocsp -index crlca.index -rsigner responder.pem -rkey responder.key -CA crlca.pem \
        -reqin req.der -respout ocsp-delegated.der -ndays 1 2>/dev/null
    cat /etc/ssl/certs/ca-certificates.crt dup1.pem dup2.pem dup1.pem rootB.pem intB.pem \
        intA.pem crlca.pem dup3.pem "$2" > bundle.pem
    cat rootA.pem bundle.pem > shifted.pem
    cat bundle.pem leafdup.pem > withleaf.pem
    # The system's directory as git reads it (the bundle, then every
    # certificate by name and by hash link), the test CA among them.
    mkdir -p sys
    cp -a /etc/ssl/certs/. sys/
    cat /etc/ssl/certs/ca-certificates.crt "$2" > sys/ca-certificates.crt
    cp "$2" sys/resumeshim-test-ca.pem
    ln -sf resumeshim-test-ca.pem "sys/$(openssl x509 -in "$2" -noout -hash).0"
    printf -- '-----BEGIN CERTIFICATE-----\nMIIB!!!notbase64\n-----END CERTIFICATE-----\n' > bad.pem
    cat dup1.pem bad.pem > partbad.pem
    cat bundle.pem bad.pem > bigbad.pem
    cat bundle.pem dup1.key > bigkey.pem
    cat dup1.key > keyonly.pem
    : > empty.pem
    # A directory of certificates, one of them twice (as /etc/ssl/certs
    # holds each by its name and by its hash).
    mkdir -p dir
    cp dup1.pem dup2.pem intB.pem rootB.pem crlca.pem dir/
    ln -sf dup1.pem dir/aaaa.0
    )
}

# same STEPS...: gnutrust without and with the shim; equal transcripts,
# the shim's in $output.
same() {
    run timeout 120 "$GNUTRUST" "$@"
    assert_success
    local plain=$output
    run with_shim "$GNUTRUST" "$@"
    assert_success
    assert_equal "$output" "$plain"
}

# same_stored STEPS...: as same, with a store ($RESUMESHIM_STORE, the
# test's own from here on) and three processes under the shim, each finding
# what the one before left there; plain is the transcript without it.
same_stored() {
    run timeout 120 "$GNUTRUST" "$@"
    assert_success
    plain=$output
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    for _ in 1 2 3; do
        run with_shim "$GNUTRUST" "$@"
        assert_success
        assert_equal "$output" "$plain"
    done
}

# The two loads that make the third one on demand.
warm() { echo new file "$1" - - new file "$1" - -; }

# fp PEM: the first six bytes of the certificate's SHA-256 fingerprint, as
# gnutrust prints them.
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 | cut -d= -f2 | tr -d : | tr A-F a-f | cut -c1-12; }

@test "GnuTLS trust: the count with duplicates, the right one of three CAs of a name" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" - - \
        verify "$FX/leafdup.pem" - localhost - issuer "$FX/leafdup.pem" bydn "$FX/leafdup.pem" \
        bykey "$FX/leafdup.pem" dn list
    assert_line "file $FX/bundle.pem - -: $ALL"
    assert_line "verify $FX/leafdup.pem: 0"
    assert_line --regexp "^  step .*leafdup .* <- CN=dup-ca $(fp "$FX/dup2.pem") status 0x0$"
    # By certificate: the one its authority key id names; by name alone:
    # the first of the name in the file.
    assert_line "issuer $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup2.pem")"
    assert_line "bydn $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup1.pem")"
    assert_line "bykey dn $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup2.pem")"
    # The list holds dup1 once.
    assert_line "list: $(( ALL - 1 )) cas, end GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE"
}

@test "GnuTLS trust: a cross-signed intermediate, its issuer, the chain's steps" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" - - \
        verify "$FX/leafx.pem" "$FX/intA.pem" - - verify "$FX/leafx.pem" - - - \
        issuer "$FX/leafx.pem" issuer "$FX/intA.pem" list
    assert_line "verify $FX/leafx.pem: 0"
    assert_line "issuer $FX/leafx.pem: 0 CN=cross-int $(fp "$FX/intB.pem")"
    refute_line --partial "status 0x42 "
}

@test "GnuTLS trust: CRLs with the file, added and verified, revoked or not" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" "$FX/crl.pem" - \
        verify "$FX/leafrev.pem" - - - verify "$FX/leafok.pem" - - - verify "$FX/leafrev.pem" - - c \
        new file "$FX/bundle.pem" - - addcrl "$FX/crl.pem" v verify "$FX/leafrev.pem" - - - \
        new addcrl "$FX/crl.pem" vf file "$FX/bundle.pem" - - verify "$FX/leafrev.pem" - - -
    assert_line "file $FX/bundle.pem $FX/crl.pem -: $(( ALL + 1 ))"
    assert_line "addcrl $FX/crl.pem v: 1 of 1"
    assert_line "addcrl $FX/crl.pem vf: GNUTLS_E_CRL_VERIFICATION_ERROR of 1"
    assert_line --regexp '^  status 0x22 '
}

@test "GnuTLS trust: certificates the program adds of a name, before and after, with and without duplicates" {
    same $(warm "$FX/bundle.pem") new add "$FX/dup3.pem" - file "$FX/bundle.pem" - - \
        issuer "$FX/leafdup.pem" bydn "$FX/leafdup.pem" list \
        new file "$FX/bundle.pem" - - add "$FX/dup1.pem" d add "$FX/dup2.pem" - \
        bydn "$FX/leafdup.pem" verify "$FX/leafdup.pem" - - - list \
        new file "$FX/bundle.pem" - k add "$FX/dup1b.pem" k bydn "$FX/leafdup.pem" list
    # dup3 first: the name's first is the program's.
    assert_line "bydn $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup3.pem")"
    assert_line "add $FX/dup1.pem d: 1 of 1"
    # The same name and key: dup1b takes dup1's place, first of the name.
    assert_line "bydn $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup1b.pem")"
}

@test "GnuTLS trust: a list of one bucket iterates in file order, whatever was looked up" {
    same $(warm "$FX/bundle.pem") new 1 file "$FX/bundle.pem" - - verify "$FX/leafdup.pem" - - - \
        add "$FX/rootA.pem" - list new 2 file "$FX/bundle.pem" - - issuer "$FX/leafx.pem" list \
        new 1000 file "$FX/bundle.pem" - - bykey "$FX/leafdup.pem" list
    assert_line "bykey $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup2.pem")"
}

@test "GnuTLS trust: names are compared as text within a bucket, never across buckets" {
    # The leaf's issuer name is dup1's in other bytes: found where both
    # fall in one bucket, not in a list of the default size.
    same $(warm "$FX/bundle.pem") new 1 file "$FX/bundle.pem" - - verify "$FX/leafps.pem" - - - \
        issuer "$FX/leafps.pem" bydn "$FX/leafps.pem" \
        new file "$FX/bundle.pem" - - verify "$FX/leafps.pem" - - - issuer "$FX/leafps.pem"
    assert_line "issuer $FX/leafps.pem: 0 CN=dup-ca $(fp "$FX/dup1.pem")"
    assert_line "bydn $FX/leafps.pem: 0 CN=dup-ca $(fp "$FX/dup1.pem")"
    assert_line "issuer $FX/leafps.pem: GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE (none)"
    assert_line --regexp '^  status 0x0 '
    assert_line --regexp '^  status 0x42 '
}

@test "GnuTLS trust: removed certificates are distrusted" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" - - remove "$FX/dup2.pem" \
        verify "$FX/leafdup.pem" - - - issuer "$FX/leafdup.pem" list \
        new remove "$FX/dup2.pem" file "$FX/bundle.pem" - - verify "$FX/leafdup.pem" - - -
    assert_line "remove $FX/dup2.pem: 1 of 1"
    assert_line "remove $FX/dup2.pem: 0 of 1"
    # Removed, its leaf's issuer is unknown (0x42); removed before the
    # load, the file's copy is in the list again, and trusted.
    assert_line --regexp '^  status 0x42 '
    assert_line --regexp '^  status 0x0 '
}

@test "GnuTLS trust: a file changed or removed after its load changes nothing" {
    local f="$BATS_TEST_TMPDIR/ca.pem" steps plain
    steps=($(warm "$f") new file "$f" - - copy "$FX/rootA.pem" "$f" verify "$FX/leafdup.pem" - - - \
        new file "$f" - - verify "$FX/leafdup.pem" - - - rm "$f" bydn "$FX/leafdup.pem" list)
    cp "$FX/bundle.pem" "$f"
    run timeout 120 "$GNUTRUST" "${steps[@]}"
    assert_success
    plain=$output
    cp "$FX/bundle.pem" "$f"
    run with_shim "$GNUTRUST" "${steps[@]}"
    assert_success
    assert_equal "$output" "$plain"
    assert_line "file $f - -: 1"
    assert_line "verify $FX/leafdup.pem: 0"
}

@test "GnuTLS trust: return values of loads that fail, again and again" {
    local f steps=()
    for f in missing bad partbad keyonly empty bigbad bigkey; do
        steps+=(new file "$FX/$f.pem" - - new file "$FX/$f.pem" - - new mem "$FX/bundle.pem" - \
            file "$FX/$f.pem" - d list)
    done
    same "${steps[@]}"
    assert_line "file $FX/missing.pem - -: GNUTLS_E_FILE_ERROR"
    # One bad block fails the whole file, whatever comes before it.
    assert_line "file $FX/bigbad.pem - -: GNUTLS_E_BASE64_UNEXPECTED_HEADER_ERROR"
    assert_line "file $FX/partbad.pem - d: GNUTLS_E_BASE64_UNEXPECTED_HEADER_ERROR"
    assert_line "file $FX/bigkey.pem - -: $ALL"
    assert_line "file $FX/empty.pem - -: GNUTLS_E_NO_CERTIFICATE_FOUND"
    # A failed load adds nothing: the bundle's, less the duplicate.
    run grep -c "^list: $(( ALL - 1 )) cas" <<< "$output"
    assert_output 7
}

@test "GnuTLS trust: a directory, the system's trust, credentials" {
    same new dir "$FX/dir" - list new system system list \
        cred credfile "$FX/bundle.pem" credfile "$FX/bundle.pem" credissuer "$FX/leafdup.pem" \
        cred credsystem credissuer "$FX/leafdup.pem" list \
        cred creddir "$FX/dir" credissuer "$FX/leafdup.pem" list \
        cred creddir /etc/ssl/certs creddir /etc/ssl/certs list
    assert_line "dir $FX/dir -: 6"
    assert_line "system: $SYS"
    assert_line "credfile $FX/bundle.pem: $ALL"
    assert_line "credissuer $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup2.pem")"
    assert_line "credissuer $FX/leafdup.pem: GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE (none)"
}

@test "GnuTLS trust: the CA names a server sends, every CA once, in file order, whatever was looked up" {
    same $(warm "$FX/bundle.pem") cred credfile "$FX/bundle.pem" credissuer "$FX/leafdup.pem" \
        canames "$CERT" "$KEY" cred credsystem credissuer "$FX/leafdup.pem" canames "$CERT" "$KEY" \
        cred credfile "$FX/bundle.pem" credfile "$FX/shifted.pem" canames "$CERT" "$KEY"
    assert_line --regexp "^  ca names $(( ALL - 1 )) digest [0-9a-f]{12}$"
    assert_line --regexp "^  ca names $SYS digest [0-9a-f]{12}$"
    # The second file adds only root-a's name: the others are duplicates.
    assert_line --regexp "^  ca names $ALL digest [0-9a-f]{12}$"
    run grep -c '^canames: client 0 server 0$' <<< "$output"
    assert_output 3
}

# Credentials whose list no one asks for (credonly) are reached only by
# their own calls and handshakes: a load on demand may wait there until
# the order of the whole list can be seen, by the CA names a server sends
# or by the list handed out (credlist). Loading a looked-up name's
# certificates into the list first reorders the names sent.
@test "GnuTLS trust: credentials never handed out, looked up and verifying, then their CA names and list" {
    same $(warm "$FX/bundle.pem") credonly credfile "$FX/bundle.pem" credverify "$CERT" "$KEY" \
        credissuer "$FX/leafdup.pem" credissuer "$FX/leafx.pem" credissuer "$FX/leafps.pem" \
        credissuer "$FX/intA.pem" canames "$CERT" "$KEY" credlist
    assert_line "credfile $FX/bundle.pem: $ALL"
    assert_line --regexp "^credverify $CERT: client 0 server 0 verify 0 status 0x0$"
    assert_line "credissuer $FX/leafdup.pem: 0 CN=dup-ca $(fp "$FX/dup2.pem")"
    assert_line --regexp "^  ca names $(( ALL - 1 )) digest [0-9a-f]{12}$"
    assert_line "list: $(( ALL - 1 )) cas, end GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE"
}

@test "GnuTLS trust: credentials never handed out take more files after their lookups" {
    same $(warm "$FX/bundle.pem") credonly credfile "$FX/bundle.pem" credissuer "$FX/leafdup.pem" \
        credfile "$FX/shifted.pem" credissuer "$FX/leafdup.pem" credissuer "$FX/leafx.pem" \
        credfile "$FX/dup3.pem" credverify "$CERT" "$KEY" canames "$CERT" "$KEY" credlist \
        credonly credfile "$FX/shifted.pem" canames "$CERT" "$KEY" credissuer "$FX/leafdup.pem" \
        credfile "$FX/bundle.pem" credverify "$CERT" "$KEY" credlist
    # shifted.pem adds root-a alone, first in the file, last of the names.
    assert_line --regexp "^  ca names $ALL digest [0-9a-f]{12}$"
    assert_line "list: $ALL cas, end GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE"
    run grep -c "^credverify $CERT: client 0 server 0 verify 0 status 0x0$" <<< "$output"
    assert_output 2
}

@test "GnuTLS trust: credentials never handed out, a directory and the system's trust" {
    same credonly creddir "$FX/dir" credfile "$FX/bundle.pem" credissuer "$FX/leafdup.pem" credlist \
        credonly credsystem credissuer "$FX/leafdup.pem" credfile "$FX/bundle.pem" \
        credissuer "$FX/leafdup.pem" canames "$CERT" "$KEY" \
        credonly credfile "$FX/bundle.pem" creddir /etc/ssl/certs credverify "$CERT" "$KEY" \
        credissuer "$FX/leafx.pem" credlist
    assert_line "creddir $FX/dir: 6"
    assert_line "credissuer $FX/leafdup.pem: GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE (none)"
    assert_line --regexp "^credverify $CERT: client 0 server 0 verify 0 status 0x0$"
}

@test "GnuTLS trust: OCSP responses, whose signer GnuTLS finds in the list itself" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" - - ocsp "$FX/ocsp.der" \
        new file "$FX/bundle.pem" - - ocsp "$FX/ocsp-nocerts.der" \
        new file "$FX/bundle.pem" - - ocsp "$FX/ocsp-delegated.der" \
        new file "$FX/shifted.pem" - - remove "$FX/crlca.pem" ocsp "$FX/ocsp.der" \
        new ocsp "$FX/ocsp.der"
    assert_line "ocsp $FX/ocsp.der: 0 verify 0x0"
    assert_line "ocsp $FX/ocsp-nocerts.der: 0 verify 0x0"
    assert_line "ocsp $FX/ocsp-delegated.der: 0 verify 0x0"
    assert_line --regexp "^ocsp $FX/ocsp.der: 0 verify 0x[1-9a-f]"
}

@test "GnuTLS trust: fork, a child goes on from its copy" {
    same $(warm "$FX/bundle.pem") new file "$FX/bundle.pem" - - bydn "$FX/leafdup.pem" \
        fork "$FX/leafx.pem" "$FX/intA.pem" list
    assert_line child
    assert_line parent
    run grep -c "^verify $FX/leafx.pem: 0" <<< "$output"
    assert_output 2
}

@test "GnuTLS trust: with the store, the next processes answer the same" {
    local steps plain
    steps=(new file "$FX/bundle.pem" - - verify "$FX/leafdup.pem" - localhost - \
        verify "$FX/leafx.pem" "$FX/intA.pem" - - issuer "$FX/leafx.pem" \
        new file "$FX/bundle.pem" "$FX/crl.pem" d verify "$FX/leafrev.pem" - - - \
        ocsp "$FX/ocsp.der" list)
    same_stored "${steps[@]}"
}

# git (libcurl-gnutls) loads the bundle, then the directory that holds it
# again with every certificate by name and by hash link, then verifies.
@test "GnuTLS trust: credentials never handed out, git's loads: the bundle, then its directory" {
    same credonly credfile "$FX/sys/ca-certificates.crt" creddir "$FX/sys" credverify "$CERT" "$KEY" \
        credissuer "$FX/leafdup.pem" canames "$CERT" "$KEY" credlist \
        credonly credfile "$FX/sys/ca-certificates.crt" creddir "$FX/sys" credverify "$CERT" "$KEY" \
        credlist
    assert_line "credfile $FX/sys/ca-certificates.crt: $(( SYS + 1 ))"
    # Every certificate at least twice more: by name and by hash link.
    run grep -E "^creddir $FX/sys: [0-9]+$" <<< "$output"
    [ "${output##* }" -ge $(( 3 * SYS )) ]
    run with_shim "$GNUTRUST" credonly credfile "$FX/sys/ca-certificates.crt" creddir "$FX/sys" \
        credverify "$CERT" "$KEY"
    assert_line --regexp "^credverify $CERT: client 0 server 0 verify 0 status 0x0$"
}

# A naive wait would load the names back in at the handshake that sends
# them, or leave them to a load after the names were freed.
@test "GnuTLS trust: CA names freed after loads that waited, and loads after that" {
    same $(warm "$FX/bundle.pem") credonly credfile "$FX/bundle.pem" credissuer "$FX/leafdup.pem" \
        freenames canames "$CERT" "$KEY" \
        credonly credfile "$FX/bundle.pem" freenames credfile "$FX/shifted.pem" \
        credissuer "$FX/leafx.pem" canames "$CERT" "$KEY" credlist
    assert_line --regexp "^  ca names 0 digest [0-9a-f]{12}$"
    # shifted.pem adds root-a alone: the only name after the others went.
    assert_line --regexp "^  ca names 1 digest [0-9a-f]{12}$"
    assert_line "  ca name CN=root-a"
    assert_line "list: $ALL cas, end GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE"
}

@test "GnuTLS trust: credentials never handed out, a file changed between their loads" {
    local f="$BATS_TEST_TMPDIR/ca.pem" steps plain
    steps=(credonly credfile "$f" credissuer "$FX/leafdup.pem" copy "$FX/rootA.pem" "$f" \
        credonly credfile "$f" credissuer "$FX/leafdup.pem" credlist \
        copy "$FX/bundle.pem" "$f" credonly credfile "$f" credverify "$CERT" "$KEY" credlist)
    cp "$FX/bundle.pem" "$f"
    run timeout 120 "$GNUTRUST" "${steps[@]}"
    assert_success
    plain=$output
    cp "$FX/bundle.pem" "$f"
    run with_shim "$GNUTRUST" "${steps[@]}"
    assert_success
    assert_equal "$output" "$plain"
    assert_line "credfile $f: 1"
    assert_line "credissuer $FX/leafdup.pem: GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE (none)"
    assert_line "list: 1 cas, end GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE"
}

# What GnuTLS reports while it loads (a non-CA certificate in the list)
# reaches an audit function set before the load, never one set after: a
# wait loads its lists before the function is set.
@test "GnuTLS trust: an audit function set after loads that waited sees none of them" {
    same credonly credfile "$FX/withleaf.pem" credissuer "$FX/leafdup.pem" audit credlist \
        credonly credfile "$FX/withleaf.pem" credissuer "$FX/leafdup.pem" credlist
    run grep -c "^  audit There was a non-CA certificate in the trusted list: .*CN=leafdup" <<< "$output"
    assert_output 1
}

# That credentials' loads do wait: many credentials loading one bundle, as
# many processes of a program would, take a fraction of the CPU time.
@test "GnuTLS trust: loads into credentials wait, a bundle's parse once per process" {
    local plain shim
    run timeout 120 "$GNUTRUST" credtime 30 "$FX/bundle.pem" "$BATS_TEST_TMPDIR/plain"
    assert_success
    assert_output "credtime 30 $FX/bundle.pem: $ALL"
    run with_shim "$GNUTRUST" credtime 30 "$FX/bundle.pem" "$BATS_TEST_TMPDIR/shim"
    assert_success
    assert_output "credtime 30 $FX/bundle.pem: $ALL"
    plain=$(cat "$BATS_TEST_TMPDIR/plain") shim=$(cat "$BATS_TEST_TMPDIR/shim")
    echo "CPU: ${plain} us without, ${shim} us with the shim" >&3
    [ $(( shim * 5 )) -lt "$plain" ]
}

# The index of what credentials loaded, kept in the store: the next
# processes parse nothing they loaded before, and answer the same; a
# damaged record is read as none, and a file changed since is parsed anew.
@test "GnuTLS trust: credentials' loads with the store, the next processes, a damaged record" {
    local steps plain rec f="$BATS_TEST_TMPDIR/ca.pem"
    cp "$FX/bundle.pem" "$f"
    steps=(credonly credfile "$FX/sys/ca-certificates.crt" creddir "$FX/sys" credverify "$CERT" "$KEY"
        credissuer "$FX/leafdup.pem" credonly credfile "$f" credissuer "$FX/leafdup.pem"
        credissuer "$FX/leafx.pem" credverify "$CERT" "$KEY" canames "$CERT" "$KEY" credlist)
    same_stored "${steps[@]}"
    rec=$(grep -l '^resumeshim-gnutls-trust 1$' "$RESUMESHIM_STORE"/t-* | head -1)
    [ -n "$rec" ]
    # One byte of an entry changed, the sum left as it was.
    printf '\377' | dd of="$rec" bs=1 seek=$(( $(stat -c %s "$rec") / 2 )) conv=notrunc 2>/dev/null
    run with_shim "$GNUTRUST" "${steps[@]}"
    assert_success
    assert_equal "$output" "$plain"
    # The file changed since it was recorded: its new bytes are parsed.
    cp "$FX/shifted.pem" "$f"
    run timeout 120 "$GNUTRUST" "${steps[@]}"
    assert_success
    plain=$output
    run with_shim "$GNUTRUST" "${steps[@]}"
    assert_success
    assert_equal "$output" "$plain"
    assert_line "credfile $f: $(( ALL + 1 ))"
}

# GnuTLS shares credentials between sessions and threads, read only: one
# thread's verifications must never see the list half made while another
# thread's call lets it be seen (a list handed out, a server session on
# the credentials). The test CA comes last, after the system's directory.
@test "GnuTLS trust: a list made whole on one thread while another verifies with the credentials" {
    same credonly creddir /etc/ssl/certs credfile "$FX/bundle.pem" racewhole "$CERT" "$KEY" list \
        credonly creddir /etc/ssl/certs credfile "$FX/bundle.pem" racewhole "$CERT" "$KEY" server
    assert_line "racewhole list: handshakes failed: none"
    assert_line "racewhole server: handshakes failed: none"
}

# gnutls_init(GNUTLS_SERVER | GNUTLS_CLIENT) makes a server (lib/state.c:
# the entity is the server whenever GNUTLS_SERVER is set): its handshake
# sends the CA names the loads gathered.
@test "GnuTLS trust: a server session made with both GNUTLS_SERVER and GNUTLS_CLIENT sends the CA names" {
    same $(warm "$FX/bundle.pem") credonly credfile "$FX/bundle.pem" canamesboth "$CERT" "$KEY"
    assert_line "canames: client 0 server 0"
    assert_line --regexp "^  ca names $(( ALL - 1 )) digest [0-9a-f]{12}$"
}

# The record is named by the GnuTLS library that parsed its contents, its
# file as well as its release, so that a library updated under the same
# release number never reads another's parse. A process that runs across
# an update (its library's file renamed over, as dpkg does) parsed with the
# old library: the record it saves after the update must not be the one
# the new library's processes read.
@test "GnuTLS trust: a record saved after the library's file was replaced is not the new library's" {
    local lib dir before after n
    lib=$(ldconfig -p | awk '/libgnutls\.so\.30 .*x86-64/ {print $NF; exit}')
    [ -n "$lib" ]
    dir="$BATS_TEST_TMPDIR/lib"
    mkdir "$dir"
    cp "$lib" "$dir/libgnutls.so.30"
    cp "$lib" "$dir/update"
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    # Loaded (indexed) with the old file, saved at the verification after
    # the new one took its place.
    run env LD_LIBRARY_PATH="$dir" LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTRUST" \
        credonly credfile "$FX/bundle.pem" copy "$dir/update" "$dir/libgnutls.so.30" \
        credverify "$CERT" "$KEY"
    assert_success
    assert_line --partial "verify 0 status 0x0"
    before=$(cd "$RESUMESHIM_STORE" && ls t-* 2>/dev/null | sort)
    # A process of the new file indexes the bundle itself: it finds no
    # record of its library's parse, so it saves one of its own name.
    run env LD_LIBRARY_PATH="$dir" LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTRUST" \
        credonly credfile "$FX/bundle.pem" credverify "$CERT" "$KEY"
    assert_success
    assert_line --partial "verify 0 status 0x0"
    after=$(cd "$RESUMESHIM_STORE" && ls t-* 2>/dev/null | sort)
    n=$(comm -13 <(echo "$before") <(echo "$after") | grep -c . || true)
    [ "$n" -eq 1 ]
}

# The same, the file replaced before the process's first load: the library
# it runs is still the one it mapped at its start.
@test "GnuTLS trust: a process whose library's file was replaced before its first load does not save under the new file's name" {
    local lib dir before after n
    lib=$(ldconfig -p | awk '/libgnutls\.so\.30 .*x86-64/ {print $NF; exit}')
    [ -n "$lib" ]
    dir="$BATS_TEST_TMPDIR/lib"
    mkdir "$dir"
    cp "$lib" "$dir/libgnutls.so.30"
    cp "$lib" "$dir/update"
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    run env LD_LIBRARY_PATH="$dir" LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTRUST" \
        copy "$dir/update" "$dir/libgnutls.so.30" credonly credfile "$FX/bundle.pem" \
        credverify "$CERT" "$KEY"
    assert_success
    assert_line --partial "verify 0 status 0x0"
    before=$(cd "$RESUMESHIM_STORE" && ls t-* 2>/dev/null | sort)
    run env LD_LIBRARY_PATH="$dir" LD_PRELOAD="$PRELOAD" timeout 120 "$GNUTRUST" \
        credonly credfile "$FX/bundle.pem" credverify "$CERT" "$KEY"
    assert_success
    assert_line --partial "verify 0 status 0x0"
    after=$(cd "$RESUMESHIM_STORE" && ls t-* 2>/dev/null | sort)
    n=$(comm -13 <(echo "$before") <(echo "$after") | grep -c . || true)
    [ "$n" -eq 1 ]
}

# The record keeps the newest contents within 1 MiB, and a process takes
# in no more contents than it keeps (1024), those read from the record
# included. A record of 1024 small contents, one program's, then leaves no
# room in any later process for a content of its own: its loads are
# GnuTLS's whole, and the record, never rewritten, never learns them.
@test "GnuTLS trust: a record full of one program's contents still takes a later process's new content" {
    local i steps=(credonly) d="$BATS_TEST_TMPDIR/many" rec
    mkdir "$d"
    for i in $(seq 1 1024); do
        { echo "# content $i"; cat "$CA"; } > "$d/$i.pem"
        steps+=(credfile "$d/$i.pem")
    done
    { echo "# the later program's own"; cat "$CA"; } > "$BATS_TEST_TMPDIR/own.pem"
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    run with_shim "$GNUTRUST" "${steps[@]}" credverify "$CERT" "$KEY"
    assert_success
    assert_line --partial "verify 0 status 0x0"
    rec=$(grep -l '^resumeshim-gnutls-trust 1$' "$RESUMESHIM_STORE"/t-* | head -1)
    [ -n "$rec" ]
    grep -aqF "# content 1024" "$rec"
    run with_shim "$GNUTRUST" credonly credfile "$BATS_TEST_TMPDIR/own.pem" credverify "$CERT" "$KEY"
    assert_success
    assert_line "credfile $BATS_TEST_TMPDIR/own.pem: 1"
    assert_line --partial "verify 0 status 0x0"
    grep -aqF "# the later program's own" "$RESUMESHIM_STORE"/t-*
}

# A program may fork on one thread (to start a command) while another
# verifies. The trust record is read and written through the store while
# the lists' lock is held, and the fork handlers take the store's lock
# before the lists': a fork between the two waits for a lock the verifying
# thread holds while that thread waits for the store's, for good.
@test "GnuTLS trust: a thread that forks beside verifications that save the trust record" {
    run timeout 120 "$GNUTRUST" forkrace "$CA" "$CERT" "$KEY" 100
    assert_success
    assert_output "forkrace: 100 of 100 verified"
    export RESUMESHIM_STORE="$BATS_TEST_TMPDIR/store"
    run env LD_PRELOAD="$PRELOAD" timeout 60 "$GNUTRUST" forkrace "$CA" "$CERT" "$KEY" 100
    assert_success
    assert_output "forkrace: 100 of 100 verified"
}
