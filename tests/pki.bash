# Small certificate authorities for the trust suites (demand.bats,
# gnutrust.bats), made with openssl in the current directory: NAME.key,
# NAME.pem. Extensions for `sign` come from the file ./ext, which the
# caller writes.

# pki_key NAME: an ECDSA P-256 key.
pki_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

# pki_root NAME SUBJECT [KEY]: a self-signed CA (of KEY's key).
pki_root() {
    local k=${3:-$1}
    [ -f "$k.key" ] || pki_key "$k"
    openssl req -x509 -new -key "$k.key" -subj "$2" -days 3 \
        -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign,cRLSign \
        -out "$1.pem" 2>/dev/null
}

# pki_sign NAME SUBJECT ISSUER EXTENSIONS [KEY]: a certificate of NAME's key
# (or KEY's), issued by ISSUER with the section EXTENSIONS of ./ext.
pki_sign() {
    local k=${5:-$1}
    [ -f "$k.key" ] || pki_key "$k"
    openssl req -new -key "$k.key" -subj "$2" -out "$1.csr" 2>/dev/null
    openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -days 2 \
        -extfile ext -extensions "$4" -out "$1.pem" 2>/dev/null
}

# pki_crl CA OUT [REVOKED...]: CA's CRL, revoking the certificates
# REVOKED.pem, in OUT; the CA's database is CA.index (for OCSP responses).
pki_crl() {
    local ca=$1 out=$2 r
    shift 2
    : > "$ca.index"
    echo 1000 > "$ca.crlnumber"
    printf '[ca]\ndefault_ca=c\n[c]\ndatabase=%s\ncrlnumber=%s\ndefault_md=sha256\n' \
        "$ca.index" "$ca.crlnumber" > "$ca.cnf"
    for r in "$@"; do
        openssl ca -config "$ca.cnf" -revoke "$r.pem" -keyfile "$ca.key" -cert "$ca.pem" 2>/dev/null
    done
    openssl ca -config "$ca.cnf" -gencrl -crldays 2 -keyfile "$ca.key" -cert "$ca.pem" \
        -out "$out" 2>/dev/null
}
