#!/usr/bin/env bats
# Programs the shim does not serve run exactly as without it.

load helpers

same_without_and_with() {
    local d="$BATS_TEST_TMPDIR"
    local rc0=0 rc1=0
    "$@" > "$d/out0" 2> "$d/err0" || rc0=$?
    LD_PRELOAD="$PRELOAD" "$@" > "$d/out1" 2> "$d/err1" || rc1=$?
    assert_equal "$rc1" "$rc0"
    run diff "$d/out0" "$d/out1"
    assert_success
    run diff "$d/err0" "$d/err1"
    assert_success
}

@test "ls: same output and exit code, nothing on stderr" {
    same_without_and_with ls -la "$ROOT"
    same_without_and_with ls /nonexistent
    RESUMESHIM_STATS=1 RESUMESHIM_POOL_SIZE=bad LD_PRELOAD="$PRELOAD" ls / > /dev/null \
        2> "$BATS_TEST_TMPDIR/err"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" ""
}

@test "bash -c true and false: same exit codes, nothing on stderr" {
    same_without_and_with bash -c true
    same_without_and_with bash -c 'echo hi; exit 3'
}

@test "wget (GnuTLS) fetches as without it" {
    start_psk
    same_without_and_with wget -q -O - --ca-certificate="$CA" "https://localhost:$PORT/"
    run cat "$BATS_TEST_TMPDIR/out1"
    assert_output ok
}

@test "only the hooks are exported, under OpenSSL's, GnuTLS's and Nettle's own versions" {
    local hook
    run sh -c "nm -D --defined-only '$SHIM' | awk '{print \$3}' | sort"
    # a hook's line names a later version than 3.0's where it has one
    expected=$(sed -n -e 's/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*\(OPENSSL_3\.3\.0\).*/\1@@\2/p' \
            -e 's/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/\1@@OPENSSL_3.0.0/p' "$ROOT/shim/openssl/hooks.def"
        echo OPENSSL_3.3.0
        sed -n 's/^GHOOK([^,]*, *\([a-z0-9_]*\),.*, *\(GNUTLS_[0-9_]*\))$/\1@@\2/p' \
        "$ROOT/shim/gnutls/hooks.def"
        echo OPENSSL_3.0.0
        sed -n 's/^GHOOK(.*, *\(GNUTLS_[0-9_]*\))$/\1/p' "$ROOT/shim/gnutls/hooks.def" | sort -u
        sed -n 's/^NHOOK(\([a-z0-9_]*\), *\(HOGWEED_[0-9]*\))$/\1@@\2/p' "$ROOT/shim/gnutls/nettle.def"
        sed -n 's/^NHOOK(.*, *\(HOGWEED_[0-9]*\))$/\1/p' "$ROOT/shim/gnutls/nettle.def" | sort -u)
    assert_equal "$output" "$(echo "$expected" | sort)"
    # each Nettle hook under the version libhogweed exports it under
    run sh -c "objdump -T /usr/lib/x86_64-linux-gnu/libhogweed.so.6 | awk '\$NF ~ /^nettle_/ {print \$NF\"@@\"\$(NF-1)}' | sort"
    local nettle="$output"
    for hook in $(sed -n 's/^NHOOK(\([a-z0-9_]*\), *\(HOGWEED_[0-9]*\))$/\1@@\2/p' \
        "$ROOT/shim/gnutls/nettle.def"); do
        grep -qx "$hook" <<< "$nettle" || fail "$hook is not how Nettle exports it"
    done
    # each GnuTLS hook under the version GnuTLS itself exports it under
    run sh -c "objdump -T /usr/lib/x86_64-linux-gnu/libgnutls.so.30 | awk '\$NF ~ /^gnutls_/ {print \$NF\"@@\"\$(NF-1)}' | sort"
    local theirs="$output"
    for hook in $(sed -n 's/^GHOOK([^,]*, *\([a-z0-9_]*\),.*, *\(GNUTLS_[0-9_]*\))$/\1@@\2/p' \
        "$ROOT/shim/gnutls/hooks.def"); do
        # (a later release's function, which this GnuTLS lacks, under no name)
        grep -qx "$hook" <<< "$theirs" || ! grep -q "^${hook%@@*}@@" <<< "$theirs" ||
            fail "$hook is not how GnuTLS exports it"
    done
    # and the shim pulls no TLS library into programs that do not use one
    run sh -c "readelf -d '$SHIM' | grep NEEDED"
    refute_output --partial libssl
    refute_output --partial libcrypto
    refute_output --partial libgnutls
    refute_output --partial libhogweed
}

# build_foreign DIR: DIR/foreign.so, a module linked to a renamed copy of
# the system's libssl and libcrypto, as a Python wheel carries one: same
# symbol versions, other file names.
build_foreign() {
    local d="$1" lib=/usr/lib/x86_64-linux-gnu
    cp "$lib/libssl.so.3" "$d/libsslcopy.so.3"
    cp "$lib/libcrypto.so.3" "$d/libcryptocopy.so.3"
    patchelf --set-soname libcryptocopy.so.3 "$d/libcryptocopy.so.3"
    patchelf --set-soname libsslcopy.so.3 "$d/libsslcopy.so.3"
    patchelf --replace-needed libcrypto.so.3 libcryptocopy.so.3 "$d/libsslcopy.so.3"
    # An old-style RPATH, which also serves the copy's own dependency.
    cc -shared -fPIC -o "$d/foreign.so" "$ROOT/tests/foreign.c" -L"$d" -l:libsslcopy.so.3 \
        -l:libcryptocopy.so.3 -Wl,--disable-new-dtags,-rpath,"$d"
    run sh -c "ldd '$d/foreign.so' | grep -c 'copy.so.3 => $d'"
    assert_output 2
}

@test "a module with its own private copy of OpenSSL 3 works as without the shim" {
    build_foreign "$BATS_TEST_TMPDIR"
    start_psk --tls13
    run client --foreign "$BATS_TEST_TMPDIR/foreign.so" --n 5 "$PORT"
    assert_success
    assert_output "reused=0 of=5 failed=0 foreign=5"
    : > "$SLOG"
    run with_shim "$CLIENT" --foreign "$BATS_TEST_TMPDIR/foreign.so" --n 5 "$PORT"
    assert_success
    # The module's 5 connections work (and are left alone: full handshakes);
    # the program's own resume as usual.
    assert_output "reused=4 of=5 failed=0 foreign=5"
    assert_equal "$(resumed)" 4
}

@test "a private OpenSSL 3 used before the system's is loaded: both work, the system's resumes" {
    build_foreign "$BATS_TEST_TMPDIR"
    start_psk --tls13
    cat > "$BATS_TEST_TMPDIR/both.py" <<'PY'
import ctypes, sys
port = int(sys.argv[2])
print("foreign", ctypes.CDLL(sys.argv[1]).foreign_fetch(port, 3))
import ssl, urllib.request   # only now does the system's libssl load
ctx = ssl.create_default_context(cafile=sys.argv[3])
for _ in range(5):
    with urllib.request.urlopen(f"https://localhost:{port}/", context=ctx) as r:
        r.read()
print("system 5")
PY
    run with_shim "$PY" "$BATS_TEST_TMPDIR/both.py" "$BATS_TEST_TMPDIR/foreign.so" "$PORT" "$CA"
    assert_success
    assert_output "foreign 3
system 5"
    assert_equal "$(connections)" 8
    assert_equal "$(resumed)" 4
}

@test "Nettle in a local scope (a plugin's or a module's own copy), after 40 libraries, and loaded again: the shim's nettle_ecdsa_verify reaches it, a good signature verifies and a corrupted one does not" {
    run "$ROOT/tests/bin/localnettle"
    assert_success
    assert_output "no global"
    run env LD_PRELOAD="$PRELOAD" "$ROOT/tests/bin/localnettle"
    assert_success
    assert_output "good=1 bad=0"
    # after 40 other libraries (a large program's), and once more after
    # Nettle was unloaded and loaded again elsewhere
    local i pads=()
    for i in $(seq 45); do
        echo "int f$i(void) { return $i; }" | cc -shared -fPIC -o "$BATS_TEST_TMPDIR/pad$i.so" -x c -
        pads+=("$BATS_TEST_TMPDIR/pad$i.so")
    done
    run env LD_PRELOAD="$PRELOAD" "$ROOT/tests/bin/localnettle" "${pads[@]:0:40}" \
        --reload "${pads[@]:40}"
    assert_success
    assert_output "good=1 bad=0
good=1 bad=0"
}

@test "a plugin that brought GnuTLS (RTLD_GLOBAL), unloaded and loaded again elsewhere: its sessions work as without the shim" {
    local d=$BATS_TEST_TMPDIR i pads=()
    printf '#include <gnutls/gnutls.h>\nint check(void) { gnutls_session_t s; if (gnutls_init(&s, GNUTLS_CLIENT)) return 0; gnutls_deinit(s); return 10; }\n' |
        cc -shared -fPIC -o "$d/plugin.so" -x c - -lgnutls
    cc -std=c11 -O2 -Wall -Wextra -Werror -o "$d/pluginhost" "$ROOT/tests/pluginhost.c" -ldl
    for i in $(seq 40); do
        echo "int f$i(void) { return $i; }" | cc -shared -fPIC -o "$d/pad$i.so" -x c -
        pads+=("$d/pad$i.so")
    done
    run env GLOBAL=1 "$d/pluginhost" "$d/plugin.so" --reload "${pads[@]}"
    assert_success
    assert_output "check=10
check=10"
    run env GLOBAL=1 LD_PRELOAD="$PRELOAD" "$d/pluginhost" "$d/plugin.so" --reload "${pads[@]}"
    assert_success
    assert_output "check=10
check=10"
}

# The shim keeps Nagle from holding the first write of a resumed TLS 1.2
# handshake; whatever TCP_NODELAY the program set, during the handshake or
# before, is what it reads back.
@test "a client that turns TCP_NODELAY on during each TLS 1.2 handshake finds it on after a resumed one" {
    start_psk --tls12
    run with_shim "$ROOT/tests/bin/nodelayclient" "$PORT" 4
    assert_success
    assert_output "resumed=0 nodelay=1
resumed=1 nodelay=1
resumed=1 nodelay=1
resumed=1 nodelay=1"
    assert_equal "$(connections) $(resumed)" "4 3"
}
