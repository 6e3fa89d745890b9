# Sourced by the scripts that need Debian's archive: what this machine's own
# apt sources name, read, never changed.
# archive REGEX: the URI of the first deb (or deb-src, with TYPE=deb-src)
# entry whose suite matches REGEX, in either of apt's formats.
archive() {
    want=$1
    type=${TYPE:-deb}
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        case "$f" in
        *.sources)
            awk -v want="$want" -v type="$type" '
                function try() { if (ok && uri != "") { n = split(suites, s, /[ \t]+/)
                    for (i = 1; i <= n; i++) if (s[i] ~ want) { print uri; exit } } }
                /^[ \t]*$/ { try(); ok = 0; uri = ""; suites = ""; next }
                /^Types:/ { ok = (" " $0 " " ~ "[ \t]" type "[ \t]") }
                /^URIs:/ { uri = $2 }
                /^Suites:/ { suites = $0; sub(/^Suites:[ \t]*/, "", suites) }
                END { try() }' "$f" ;;
        *)
            awk -v want="$want" -v type="$type" '$1 == type { i = 2; if ($2 ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++
                if ($2 ~ /^\[/) i++; if ($(i+1) ~ want) { print $i; exit } }' "$f" ;;
        esac
    done | head -n 1
}
# The machine's release name (bookworm, trixie).
codename() {
    . /etc/os-release && echo "$VERSION_CODENAME"
}
