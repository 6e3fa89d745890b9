# Sourced by the scripts that build a Debian package's source for the tests.
# debsrc DIR SRC BIN: unpacks Debian's source SRC, at the version the
# installed package BIN was built from, into DIR/src/SRC. The source comes
# from the archives this machine's apt sources name, for its own release,
# through apt with a private configuration (deb-src entries of its own, its
# own lists and cache under DIR): the machine's apt sources are not changed.
# An archive may list a version whose files it no longer serves: then the
# newest other version of the same upstream release (3.5.x of 3.5.9) is
# taken, and said on stderr.
. scripts/archive.sh
debsrc() {
    local dir=$1 pkg=$2 bin=$3 code main security version keys
    version=$(dpkg-query -W -f='${source:Version}' "$bin") ||
        { echo "debsrc: $bin is not installed" >&2; return 1; }
    code=$(codename)
    main=$(archive "^$code\$")
    security=$(archive "^$code-security\$")
    [ -n "$main" ] || { echo "debsrc: no archive for $code in the apt sources" >&2; return 1; }
    keys=/usr/share/keyrings/debian-archive-keyring.gpg
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
    dir=$(cd "$dir" && pwd)
    {
        echo "deb-src [signed-by=$keys] $main $code main"
        echo "deb-src [signed-by=$keys] $main $code-updates main"
        [ -z "$security" ] || echo "deb-src [signed-by=$keys] $security $code-security main"
    } > "$dir/apt/sources.list"
    set -- -q -o Dir::Etc::SourceList="$dir/apt/sources.list" \
        -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$dir/apt/lists" \
        -o Dir::Cache="$dir/apt/cache" -o Debug::NoLocking=1
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    (
        cd "$dir/src"
        apt-get "$@" update >&2
        local series v
        series=$(echo "${version#*:}" | cut -d. -f1,2)
        for v in "$version" $(apt-cache "$@" showsrc "$pkg" | sed -n 's/^Version: //p' |
                              grep -F "$series." | sort -u -r -V); do
            [ "$v" = "$version" ] || echo "debsrc: $pkg $version is not served; taking $v" >&2
            apt-get "$@" source --download-only "$pkg=$v" >&2 && break
            rm -f ./*.dsc
        done
        dpkg-source -x "${pkg}"_*.dsc "$pkg" >&2
    )
}
