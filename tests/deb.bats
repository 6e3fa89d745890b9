#!/usr/bin/env bats
# The Debian package: `make deb` builds it out of a copy of the tree,
# lintian passes it, and, installed with apt-get on this machine, the
# command in /usr/bin preloads the library from the multiarch directory and
# curl (OpenSSL) and wget (GnuTLS) run once per request resume across runs,
# as nginx saw it; apt-get purge then leaves no file behind. A libresumeshim
# package already installed, or a file of the package already in place (a
# make install with PREFIX=/usr), is not replaced: the install is skipped,
# saying why.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    make_certs "$BATS_FILE_TMPDIR"
    CA="$BATS_FILE_TMPDIR/ca.pem" CERT="$BATS_FILE_TMPDIR/server.pem"
    KEY="$BATS_FILE_TMPDIR/server.key"
    VERSION=$(sed -n 's/^#define VERSION "\(.*\)"$/\1/p' "$ROOT/cmd/resumeshim.c")
    ARCH=$(dpkg --print-architecture)
    MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
    DEB="$ROOT/build/libresumeshim_${VERSION}_$ARCH.deb"
    CHANGES="$ROOT/build/libresumeshim_${VERSION}_$ARCH.changes"
    export CA CERT KEY VERSION ARCH MULTIARCH DEB CHANGES
    rm -f "$DEB"
    if ! make -C "$ROOT" deb > "$BATS_FILE_TMPDIR/deb.log" 2>&1; then
        tail -n 40 "$BATS_FILE_TMPDIR/deb.log" >&2
        return 1
    fi
}

# The helpers' teardown (servers, mounts) runs after the package is purged.
eval "helpers_$(declare -f teardown)"
teardown() {
    if [ -f "$BATS_TEST_TMPDIR/installed" ]; then
        apt-get purge -y -q -o DPkg::Lock::Timeout=120 libresumeshim > /dev/null 2>&1 ||
            dpkg --purge libresumeshim > /dev/null 2>&1 || true
        rm -f "$BATS_TEST_TMPDIR/installed"
    fi
    helpers_teardown
}

# The package's files as they are installed, one path a line, sorted.
package_files() {
    printf '%s\n' "/usr/bin/resumeshim" "/usr/lib/$MULTIARCH/libresumeshim.so" \
        /usr/share/doc/libresumeshim/changelog.gz /usr/share/doc/libresumeshim/copyright \
        /usr/share/lintian/overrides/libresumeshim /usr/share/man/man1/resumeshim.1.gz \
        /usr/share/man/man7/libresumeshim.7.gz | sort
}

# Whatever on the machine is named after the project, where a package or
# make install puts it, and dpkg's own records.
scan() {
    find /usr /etc /var/lib/dpkg -xdev -name '*resumeshim*' 2> /dev/null | sort
}

@test "make deb leaves the package in build/ and nothing in the tree" {
    [ -f "$DEB" ]
    [ -f "$CHANGES" ]
    [ ! -e "$ROOT/build/deb" ]
    for f in files libresumeshim .debhelper debhelper-build-stamp libresumeshim.substvars \
             libresumeshim.debhelper.log; do
        [ ! -e "$ROOT/debian/$f" ] || { echo "debian/$f left in the tree"; false; }
    done
    run find "$ROOT/build" -maxdepth 1 -name '*.deb'
    assert_output "$DEB"
}

@test "the package holds the library in the multiarch directory, the command and both manual pages" {
    run dpkg-deb -f "$DEB" Package Version Architecture
    assert_output "Package: libresumeshim
Version: $VERSION
Architecture: $ARCH"
    # The C library only, as shlibs found it: the shim finds libssl and
    # libgnutls in the programs that loaded them.
    run dpkg-deb -f "$DEB" Depends
    assert_output --regexp '^libc6 \(>= [0-9.]+\)$'
    run bash -c "dpkg-deb --fsys-tarfile '$DEB' | tar -t | sed -n 's|^\./|/|; /[^/]$/p' | sort"
    assert_output "$(package_files)"
    run bash -c "dpkg-deb --fsys-tarfile '$DEB' | tar -xO ./usr/bin/resumeshim | strings | grep '^libdir='"
    assert_output "libdir='/usr/lib/$MULTIARCH'"
}

@test "lintian: no error and no warning, every exception overridden with its reason" {
    run --separate-stderr lintian --fail-on error,warning "$CHANGES"
    assert_success
    refute_output --regexp '^[EW]: '
    # each override with a comment above it saying why
    run awk '/^libresumeshim: / && prev !~ /^# / { print } { prev = $0 }' \
        "$ROOT/debian/libresumeshim.lintian-overrides"
    assert_output ""
}

@test "installed with apt-get: resumeshim from /usr/bin resumes curl and wget across runs; purge leaves nothing" {
    [ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
    status_was=$(dpkg-query -W -f '${db:Status-Status}' libresumeshim 2> /dev/null || true)
    case $status_was in
    "" | not-installed) ;;
    *) skip "libresumeshim is on this machine already ($status_was): left as it is" ;;
    esac
    for f in $(package_files); do
        [ ! -e "$f" ] || skip "$f is on this machine already (make install?): left as it is"
    done
    before=$(scan)

    touch "$BATS_TEST_TMPDIR/installed"
    run apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$DEB"
    assert_success
    run dpkg-query -W -f '${Status} ${Version}' libresumeshim
    assert_output "install ok installed $VERSION"
    run bash -c "dpkg -L libresumeshim | while read -r p; do [ -d \"\$p\" ] || echo \"\$p\"; done | sort"
    assert_output "$(package_files)"
    [ -x /usr/bin/resumeshim ] && [ -f "/usr/lib/$MULTIARCH/libresumeshim.so" ]

    export HOME="$BATS_TEST_TMPDIR/home"
    mkdir -p "$HOME"
    unset XDG_RUNTIME_DIR XDG_CACHE_HOME RESUMESHIM_STORE LD_PRELOAD
    run /usr/bin/resumeshim sh -c 'echo "$LD_PRELOAD"'
    assert_output "/usr/lib/$MULTIARCH/libresumeshim.so"
    start_nginx
    for i in 1 2 3 4 5; do
        run /usr/bin/resumeshim curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}\n' \
            "https://localhost:$PORT/"
        assert_output 200
    done
    assert_equal "$(nginx_requests)" 5
    assert_equal "$(nginx_resumed)" 4
    # the command reads the store the library wrote
    run /usr/bin/resumeshim list
    assert_line --regexp '^[0-9a-f]{16} +TLSv1\.3 '
    : > "$SLOG"
    for i in 1 2 3 4 5; do
        run /usr/bin/resumeshim --store "$BATS_TEST_TMPDIR/wget-store" \
            wget -q -O - --ca-certificate="$CA" "https://localhost:$PORT/"
        assert_output ok
    done
    assert_equal "$(nginx_requests)" 5
    assert_equal "$(nginx_resumed)" 4

    run apt-get purge -y -q -o DPkg::Lock::Timeout=120 libresumeshim
    assert_success
    rm "$BATS_TEST_TMPDIR/installed"
    run dpkg-query -W libresumeshim
    assert_failure
    for f in $(package_files) /usr/share/doc/libresumeshim; do
        [ ! -e "$f" ] || { echo "$f left behind"; false; }
    done
    assert_equal "$(scan)" "$before"
}
