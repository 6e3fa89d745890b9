#!/usr/bin/env bats
# The resumeshim command: options, the environment it gives the program,
# exit codes, what it refuses, list and clear on a store made by hand, its
# manual page, and make install.

bats_require_minimum_version 1.5.0
load helpers

RS="$ROOT/scripts/resumeshim"

# Every test gets a HOME of its own and no inherited store, so that the
# default store is created where the test looks, and nowhere else.
setup() {
    export HOME="$BATS_TEST_TMPDIR/home"
    mkdir -p "$HOME"
    unset XDG_RUNTIME_DIR XDG_CACHE_HOME RESUMESHIM_STORE LD_PRELOAD
    SHIM_REAL=$(readlink -f "$SHIM")
}

# A harmless library to find in LD_PRELOAD next to the shim.
other_lib() {
    printf 'int resumeshim_test_other;\n' |
        cc -shared -fPIC -x c -o "$BATS_TEST_TMPDIR/other.so" -
    echo "$BATS_TEST_TMPDIR/other.so"
}

@test "--help and -h print the usage on stdout and exit 0; --version and -V print the version" {
    run --separate-stderr "$RS" --help
    assert_success
    assert_line --index 0 --partial 'Usage: resumeshim [OPTION]... [--] COMMAND [ARG]...'
    assert_equal "$stderr" ""
    run "$RS" -h
    assert_success
    assert_output --partial '--pool-size'
    version=$(sed -n 's/^version=//p' "$RS")
    [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
    run "$RS" --version
    assert_success
    assert_output "resumeshim $version"
    run "$RS" -V
    assert_output "resumeshim $version"
}

@test "usage errors exit 2 with a message and a hint on stderr" {
    for args in "" "--bogus true" "-x true" "--pool-size" "--store" "--stats=1 true" \
                "--help=yes" "--server=1 true" "list --store /tmp" "clear extra"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$RS" $args
        assert_equal "$status" 2
        assert_equal "$output" ""
        [[ "$stderr" == resumeshim:* ]]
        [[ "$stderr" == *"Try 'resumeshim --help'"* ]]
    done
}

@test "bad option values exit 2 and name the value; good ones are accepted" {
    for args in "-n 0" "-n 65" "--pool-size x" "--pool-size=" "-n -1" "-a 0" \
                "--max-age 604801" "--max-age 1h" "--max-hosts 0" "--max-hosts 1000001" \
                "--max-hosts 99999999999999999999" "--log loud" "--log-file=" "--store=" \
                "--ticket-key-rotate 0" "--ticket-key-rotate 1d"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$RS" $args true
        assert_equal "$status" 2
        [[ "$stderr" == resumeshim:*invalid*"Try 'resumeshim --help'"* ||
           "$stderr" == resumeshim:*needs*"Try 'resumeshim --help'"* ]]
    done
    run "$RS" -n 64 -a 604800 --max-hosts 1000000 --log off true
    assert_success
    run "$RS" -n 1 -a 1 --max-hosts 1 --log 4 true
    assert_success
}

@test "the command's exit status is passed through, signals too" {
    run "$RS" sh -c 'exit 7'
    assert_equal "$status" 7
    run "$RS" true
    assert_success
    run "$RS" sh -c 'kill -TERM $$'
    assert_equal "$status" 143
}

@test "the program gets its arguments as given, and stdin" {
    run "$RS" sh -c 'printf "[%s]" "$@"; cat' argv0 'a b' '' -n --
    assert_output '[a b][][-n][--]'
    run bash -c "echo piped | '$RS' sh -c 'printf \"[%s]\" \"\$0\" \"\$@\"; cat' x -n --store"
    assert_output '[x][-n][--store]piped'
}

@test "LD_PRELOAD: the shim's absolute path first, once" {
    other=$(other_lib)
    run "$RS" sh -c 'echo "$LD_PRELOAD"'
    assert_output "$SHIM_REAL"
    LD_PRELOAD="$other" run "$RS" sh -c 'echo "$LD_PRELOAD"'
    assert_output "$SHIM_REAL $other"
    # Already there, by the same or another path, after a library that may
    # have to stay first: left as it was.
    for pre in "$SHIM_REAL" "$other $SHIM_REAL" "$other:$SHIM_REAL" " $other  $SHIM_REAL "; do
        LD_PRELOAD="$pre" run "$RS" sh -c 'echo "$LD_PRELOAD"'
        assert_output "$pre"
    done
    ln -s "$SHIM_REAL" "$BATS_TEST_TMPDIR/link.so"
    LD_PRELOAD="$other:$BATS_TEST_TMPDIR/link.so" run "$RS" sh -c 'echo "$LD_PRELOAD"'
    assert_output "$other:$BATS_TEST_TMPDIR/link.so"
    # A program really gets the shim: its stats line at exit.
    run "$RS" --stats --no-store "$CLIENT" --n 1 1
    assert_output --partial "resumeshim["
}

@test "the script finds the library beside it through a symlink, and says so when it is missing" {
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    ln -s "$RS" "$BATS_TEST_TMPDIR/bin/resumeshim"
    run "$BATS_TEST_TMPDIR/bin/resumeshim" sh -c 'echo "$LD_PRELOAD"'
    assert_output "$SHIM_REAL"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run resumeshim sh -c 'echo "$LD_PRELOAD"'
    assert_output "$SHIM_REAL"
    mkdir -p "$BATS_TEST_TMPDIR/tree/scripts"
    cp "$RS" "$BATS_TEST_TMPDIR/tree/scripts/"
    run "$BATS_TEST_TMPDIR/tree/scripts/resumeshim" true
    assert_failure 1
    assert_output --partial "$BATS_TEST_TMPDIR/tree/libresumeshim.so: no such library"
}

@test "options become the RESUMESHIM_* variables" {
    run "$RS" --pool-size 3 sh -c 'echo $RESUMESHIM_POOL_SIZE'
    assert_output 3
    run "$RS" -n 5 sh -c 'echo $RESUMESHIM_POOL_SIZE'
    assert_output 5
    run "$RS" --pool-size=007 -n12 sh -c 'echo $RESUMESHIM_POOL_SIZE'
    assert_output 12
    run "$RS" --pool-size=007 sh -c 'echo $RESUMESHIM_POOL_SIZE'
    assert_output 7
    run "$RS" -a 60 --max-hosts 5 --stats --log debug sh -c \
        'echo $RESUMESHIM_MAX_AGE $RESUMESHIM_MAX_HOSTS $RESUMESHIM_STATS $RESUMESHIM_LOG'
    assert_output '60 5 1 debug'
    run "$RS" --max-age=600 sh -c 'echo $RESUMESHIM_MAX_AGE'
    assert_output 600
    run "$RS" --server --ticket-key-rotate=90 sh -c 'echo $RESUMESHIM_SERVER $RESUMESHIM_TICKET_KEY_ROTATE'
    assert_output '1 90'
    cd "$BATS_TEST_TMPDIR"
    run "$RS" --log-file shim.log sh -c 'echo $RESUMESHIM_LOG_FILE'
    assert_output "$BATS_TEST_TMPDIR/shim.log"
    # Unset options leave inherited variables alone and set nothing.
    RESUMESHIM_POOL_SIZE=9 run "$RS" sh -c 'echo "${RESUMESHIM_POOL_SIZE}/${RESUMESHIM_MAX_AGE-unset}/${RESUMESHIM_STATS-unset}"'
    assert_output '9/unset/unset'
    # The library reads them: the log file gets its stats line.
    run "$RS" --no-store --stats --log-file shim.log "$CLIENT" --n 1 1
    grep -q '^resumeshim\[[0-9]*\]: handshakes=' "$BATS_TEST_TMPDIR/shim.log"
}

@test "the default store: XDG_RUNTIME_DIR when it is a directory, else the cache, created 0700" {
    run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_success
    assert_output "$HOME/.cache/resumeshim"
    assert_equal "$(stat -c %a "$HOME/.cache/resumeshim")" 700
    export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/run"
    # Not a directory: ignored.
    run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$HOME/.cache/resumeshim"
    mkdir -m 700 "$XDG_RUNTIME_DIR"
    run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$XDG_RUNTIME_DIR/resumeshim"
    assert_equal "$(stat -c %a "$XDG_RUNTIME_DIR/resumeshim")" 700
    unset XDG_RUNTIME_DIR
    XDG_CACHE_HOME="$BATS_TEST_TMPDIR/c/d" run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$BATS_TEST_TMPDIR/c/d/resumeshim"
    assert_equal "$(stat -c %a "$BATS_TEST_TMPDIR/c/d/resumeshim")" 700
    # A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
    XDG_CACHE_HOME=rel run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$HOME/.cache/resumeshim"
    # No HOME directory (system users have /nonexistent): none is made,
    # and the program runs with sessions in memory.
    HOME="$BATS_TEST_TMPDIR/nonexistent" run --separate-stderr "$RS" sh -c 'echo "${RESUMESHIM_STORE-unset}"'
    assert_success
    assert_output unset
    assert_equal "$stderr" "resumeshim: no store: no XDG_RUNTIME_DIR, XDG_CACHE_HOME or HOME directory; sessions stay in memory"
    [ ! -e "$BATS_TEST_TMPDIR/nonexistent" ]
    HOME="$BATS_TEST_TMPDIR/nonexistent" run "$RS" list
    assert_success
    assert_output ""
}

@test "--store DIR, an inherited RESUMESHIM_STORE, and --no-store" {
    cd "$BATS_TEST_TMPDIR"
    run "$RS" --store s1 sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$BATS_TEST_TMPDIR/s1"
    assert_equal "$(stat -c %a s1)" 700
    RESUMESHIM_STORE="$BATS_TEST_TMPDIR/s2" run "$RS" sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$BATS_TEST_TMPDIR/s2"
    RESUMESHIM_STORE="$BATS_TEST_TMPDIR/s2" run "$RS" --store s1 sh -c 'echo "$RESUMESHIM_STORE"'
    assert_output "$BATS_TEST_TMPDIR/s1"
    RESUMESHIM_STORE="$BATS_TEST_TMPDIR/s2" run "$RS" --no-store sh -c 'echo "${RESUMESHIM_STORE-unset}"'
    assert_output unset
    run "$RS" --no-store sh -c 'echo "${RESUMESHIM_STORE-unset}"'
    assert_output unset
    [ ! -e "$HOME/.cache" ]
    # An existing directory is left as it is: the library judges it.
    mkdir -m 755 s3
    run "$RS" --store s3 true
    assert_success
    assert_equal "$(stat -c %a s3)" 755
}

@test "setuid, setgid and file-capability programs are refused with 126" {
    d="$BATS_TEST_TMPDIR/bin"
    mkdir -p "$d"
    cp /bin/true "$d/su" && chmod u+s "$d/su"
    cp /bin/true "$d/sg" && chmod g+s "$d/sg"
    cp /bin/true "$d/cap" && setcap cap_net_raw+ep "$d/cap"
    cp /bin/true "$d/plain"
    run --separate-stderr "$RS" "$d/su"
    assert_equal "$status" 126
    [[ "$stderr" == *"$d/su is setuid: the dynamic loader would ignore LD_PRELOAD"* ]]
    run --separate-stderr "$RS" "$d/sg"
    assert_equal "$status" 126
    [[ "$stderr" == *"is setgid"*LD_PRELOAD* ]]
    run --separate-stderr "$RS" "$d/cap"
    assert_equal "$status" 126
    [[ "$stderr" == *"has file capabilities"*LD_PRELOAD* ]]
    # Found through PATH, as exec finds it.
    PATH="$d:$PATH" run --separate-stderr "$RS" su
    assert_equal "$status" 126
    [[ "$stderr" == *"$d/su is setuid"* ]]
    PATH="$d:$PATH" run "$RS" plain
    assert_success
}

@test "a command not found exits 127, one not executable 126" {
    run -127 --separate-stderr "$RS" resumeshim-no-such-command
    assert_equal "$stderr" "resumeshim: 'resumeshim-no-such-command': command not found"
    run -127 "$RS" "$BATS_TEST_TMPDIR/none"
    printf '#!/bin/sh\n' > "$BATS_TEST_TMPDIR/noexec"
    run "$RS" "$BATS_TEST_TMPDIR/noexec"
    assert_equal "$status" 126
}

@test "resumeshim -- list runs a program named list" {
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    printf '#!/bin/sh\necho "the program, $*"\n' > "$BATS_TEST_TMPDIR/bin/list"
    chmod +x "$BATS_TEST_TMPDIR/bin/list"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run "$RS" -- list x
    assert_output "the program, x"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run "$RS" --stats -- list y
    assert_output "the program, y"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run "$RS" list
    assert_success
    assert_output ""
}

# make_store DIR: a store in the library's format, version 1, by hand.
# Sets SALT; ticket lines are relative to NOW.
server_hash() { printf '%s\n%s' "$SALT" "$1" | sha256sum | cut -c1-64; }
make_store() {
    local d="$1" t
    mkdir -m 700 "$d"
    : > "$d/resumeshim-store"
    NOW=$(date +%s)
    SALT=$(head -c 32 /dev/urandom | sha256sum | cut -c1-64)
    echo "resumeshim-store 1 $SALT" > "$d/salt"
    : > "$d/lock"
    # A known server: two live tickets, an expired one, a TLS 1.2 session.
    t="$d/s-$(printf 1 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 1\nserver %s\n' "$(server_hash localhost:8443)" > "$t"
    printf 'tls1.3 %d %d QUJD -\n' $((NOW - 300)) $((NOW + 5400)) \
        $((NOW - 7300)) $((NOW - 10)) >> "$t"
    printf 'tls1.2 %d %d QUJD QUJD\n' $((NOW - 7200)) $((NOW + 172800)) >> "$t"
    # A server given by default port, and one by IPv6 address.
    t="$d/s-$(printf 2 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 1\nserver %s\ntls1.3 %d %d QUJD -\n' \
        "$(server_hash a.test:443)" $((NOW - 600)) $((NOW + 3000)) > "$t"
    t="$d/s-$(printf 3 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 1\nserver %s\ntls1.2 %d %d QUJD -\n' \
        "$(server_hash '[::1]:443')" $((NOW - 180)) $((NOW + 3 * 86400 + 100)) > "$t"
    # Ignored: only expired tickets, a foreign version, random bytes, a
    # malformed ticket line, a file of another name.
    t="$d/s-$(printf 4 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 1\nserver %s\ntls1.3 %d %d QUJD -\n' \
        "$(server_hash b.test:443)" $((NOW - 100)) $((NOW - 1)) > "$t"
    t="$d/s-$(printf 5 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 2\nserver %s\ntls1.3 %d %d QUJD -\n' \
        "$(server_hash b.test:443)" $((NOW - 100)) $((NOW + 100)) > "$t"
    head -c 512 /dev/urandom > "$d/s-$(printf 6 | sha256sum | cut -c1-64)"
    t="$d/s-$(printf 7 | sha256sum | cut -c1-64)"
    printf 'resumeshim-store 1\nserver %s\ntls1.3 %d %d QUJD -\ntls1.3 yesterday\n' \
        "$(server_hash b.test:443)" $((NOW - 100)) $((NOW + 100)) > "$t"
    printf 'resumeshim-store 1\nserver %s\ntls1.3 %d %d QUJD -\n' \
        "$(server_hash b.test:443)" $((NOW - 100)) $((NOW + 100)) > "$d/other"
    : > "$d/tmp"
    chmod 600 "$d"/*
}

@test "list shows live tickets: known servers by name, others by hash prefix" {
    s="$BATS_TEST_TMPDIR/store"
    make_store "$s"
    run "$RS" --store "$s" list localhost:8443 a.test '::1' b.test
    assert_success
    assert_line --index 0 --regexp '^SERVER +PROTOCOL +AGE +EXPIRES IN$'
    assert_line --regexp '^localhost:8443 +TLSv1\.3 +5m +1h$'
    assert_line --regexp '^localhost:8443 +TLSv1\.2 +2h +(1|2)d$'
    assert_line --regexp '^a\.test:443 +TLSv1\.3 +10m +(49|50)m$'
    assert_line --regexp '^\[::1\]:443 +TLSv1\.2 +3m +3d$'
    assert_equal "${#lines[@]}" 5
    refute_output --partial b.test
    # Unknown names: the first 16 hex digits of the hash; same lines.
    run "$RS" --store "$s" list
    assert_success
    assert_line --regexp "^$(server_hash localhost:8443 | cut -c1-16) +TLSv1\.3 +5m +1h$"
    assert_line --regexp "^$(server_hash a.test:443 | cut -c1-16) +TLSv1\.3"
    assert_equal "${#lines[@]}" 5
    # Names are matched case-insensitively and with explicit brackets.
    run "$RS" --store "$s" list LOCALHOST:8443 '[::1]'
    assert_line --regexp '^localhost:8443 +TLSv1\.3'
    assert_line --regexp '^\[::1\]:443 +TLSv1\.2'
    # URLs name their server.
    run "$RS" --store "$s" list https://localhost:8443/x 'https://[::1]/'
    assert_line --regexp '^localhost:8443 +TLSv1\.3'
    assert_line --regexp '^\[::1\]:443 +TLSv1\.2'
    # The default store, through RESUMESHIM_STORE.
    RESUMESHIM_STORE="$s" run "$RS" list a.test
    assert_line --regexp '^a\.test:443 +TLSv1\.3'
}

@test "list on an empty or missing store prints nothing and succeeds" {
    run --separate-stderr "$RS" --store "$BATS_TEST_TMPDIR/none" list
    assert_success
    assert_output ""
    assert_equal "$stderr" ""
    [ ! -e "$BATS_TEST_TMPDIR/none" ]
    mkdir -m 700 "$BATS_TEST_TMPDIR/empty"
    run "$RS" --store "$BATS_TEST_TMPDIR/empty" list a.test
    assert_success
    assert_output ""
    run "$RS" list
    assert_success
    assert_output ""
    [ ! -e "$HOME/.cache/resumeshim" ]
}

@test "clear empties the store under its lock" {
    s="$BATS_TEST_TMPDIR/store"
    make_store "$s"
    # While another process holds the lock, clear waits and changes nothing.
    flock "$s/lock" sleep 3 3>&- &
    sleep 0.5
    run timeout 1 "$RS" --store "$s" clear
    assert_equal "$status" 124
    [ -e "$s/salt" ]
    wait
    run "$RS" --store "$s" clear
    assert_success
    assert_output ""
    run ls -A "$s"
    assert_output "lock
other
resumeshim-store"
    run "$RS" --store "$s" list
    assert_output ""
    # Nothing to clear: still fine.
    run "$RS" --store "$s" clear
    assert_success
    run "$RS" --store "$BATS_TEST_TMPDIR/none" clear
    assert_success
    [ ! -e "$BATS_TEST_TMPDIR/none" ]
}

@test "list and clear refuse a store others can read or write, or owned by another user" {
    s="$BATS_TEST_TMPDIR/store"
    make_store "$s"
    chmod 777 "$s"
    run --separate-stderr "$RS" --store "$s" list
    assert_failure 1
    assert_output ""
    [[ "$stderr" == *"refusing a store others can read or write (mode 777)"* ]]
    run --separate-stderr "$RS" --store "$s" clear
    assert_failure 1
    [[ "$stderr" == *"refusing a store others can read or write"* ]]
    [ -e "$s/salt" ]
    for m in 720 755 750 701; do
        chmod "$m" "$s"
        run "$RS" --store "$s" list
        assert_failure 1
        run "$RS" --store "$s" clear
        assert_failure 1
        [ -e "$s/salt" ]
    done
    chmod 700 "$s"
    chown nobody "$s"
    run --separate-stderr "$RS" --store "$s" clear
    assert_failure 1
    [[ "$stderr" == *"refusing a store not owned by"* ]]
    [ -e "$s/salt" ]
    run "$RS" --store "$s/salt" list
    assert_failure 1
    run "$RS" --no-store list
    assert_failure 2
}

@test "the manual pages lint clean" {
    for page in resumeshim.1 libresumeshim.7; do
        run mandoc -T lint "$ROOT/scripts/$page"
        assert_success
        assert_output ""
        run groff -man -ww -z "$ROOT/scripts/$page"
        assert_success
        assert_output ""
    done
}

@test "resumeshim(1) documents every option and every variable the command sets" {
    page=$(sed 's/\\-/-/g' "$ROOT/scripts/resumeshim.1")
    for opt in $("$RS" --help | grep -o -- '--[a-z-]*[a-z]' | sort -u); do
        [[ "$page" == *"$opt"* ]] || { echo "man page lacks $opt"; false; }
    done
    vars=$(grep -o 'RESUMESHIM_[A-Z_]*[A-Z]' "$RS" | sort -u)
    [[ "$vars" == *RESUMESHIM_STORE* ]]
    for var in $vars; do
        [[ "$page" == *".B $var"* ]] || { echo "man page lacks $var"; false; }
    done
    [[ "$page" == *".BR libresumeshim (7)"* ]]
}

# The variables the library and the command read, each the subject of one
# entry in libresumeshim(7)'s ENVIRONMENT and one row of the README's table:
# none missing, none that the code no longer reads.
@test "libresumeshim(7) and the README list exactly the RESUMESHIM_ variables the code reads" {
    code=$({ grep -ohE '"RESUMESHIM_[A-Z_]+"' "$ROOT"/shim/*/*.c | tr -d '"'
             grep -o 'RESUMESHIM_[A-Z_]*[A-Z]' "$RS"; } | sort -u)
    [[ "$code" == *RESUMESHIM_POOL_SIZE*RESUMESHIM_TICKET_KEY_ROTATE* ]]
    man=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$ROOT/scripts/libresumeshim.7" |
          awk 'prev == ".TP" && /^\.B RESUMESHIM_/ { print $2 } { prev = $0 }' | sort)
    assert_equal "$man" "$code"
    readme=$(grep -o '^| `RESUMESHIM_[A-Z_]*`' "$ROOT/README.md" | tr -d '|` ' | sort)
    assert_equal "$readme" "$code"
}

@test "make install DESTDIR PREFIX puts four files in place; make uninstall removes them" {
    d="$BATS_TEST_TMPDIR/dest"
    run make -s -C "$ROOT" install DESTDIR="$d" PREFIX=/usr
    assert_success
    run find "$d" -type f -printf '%m %P\n'
    assert_equal "$(sort <<< "$output")" "644 usr/lib/libresumeshim.so
644 usr/share/man/man1/resumeshim.1
644 usr/share/man/man7/libresumeshim.7
755 usr/bin/resumeshim"
    cmp "$ROOT/libresumeshim.so" "$d/usr/lib/libresumeshim.so"
    run grep -c '^libdir=' "$d/usr/bin/resumeshim"
    assert_output 1
    grep -qx "libdir='/usr/lib'" "$d/usr/bin/resumeshim"
    version=$(sed -n 's/^version=//p' "$RS")
    grep -q "^\.TH RESUMESHIM 1 .*\"libresumeshim $version\"" "$d/usr/share/man/man1/resumeshim.1"
    grep -q "^\.TH LIBRESUMESHIM 7 .*\"libresumeshim $version\"" "$d/usr/share/man/man7/libresumeshim.7"
    run make -s -C "$ROOT" uninstall DESTDIR="$d" PREFIX=/usr
    assert_success
    run find "$d" ! -type d
    assert_output ""
}

@test "installed to a PREFIX, the command resumes: 4 of 5 as the server saw" {
    p="$BATS_TEST_TMPDIR/p"
    run make -s -C "$ROOT" install PREFIX="$p"
    assert_success
    run "$p/bin/resumeshim" sh -c 'echo "$LD_PRELOAD"'
    assert_output "$p/lib/libresumeshim.so"
    start_psk
    run "$p/bin/resumeshim" "$CLIENT" --n 5 "$PORT"
    assert_success
    assert_output --partial 'failed=0'
    assert_equal "$(connections)" 5
    assert_equal "$(resumed)" 4
    run make -s -C "$ROOT" uninstall PREFIX="$p"
    assert_success
    [ ! -e "$p/bin/resumeshim" ] && [ ! -e "$p/lib/libresumeshim.so" ]
}

# The command is for loops that run a program once per request: it judges
# and execs in-process, a shell and getcap no more.
@test "the command starts no process of its own: its exec, the program's, and no fork" {
    run strace -f -e trace=execve,execveat,fork,vfork,clone,clone3 -o "$BATS_TEST_TMPDIR/t" \
        "$RS" /bin/true
    assert_success
    run grep -cE '^[0-9]+ +(execve|execveat)\(' "$BATS_TEST_TMPDIR/t"
    assert_output 2
    run grep -E '^[0-9]+ +(fork|vfork|clone|clone3)\(' "$BATS_TEST_TMPDIR/t"
    assert_output ""
    grep -q 'execve("/bin/true", \["/bin/true"\]' "$BATS_TEST_TMPDIR/t"
}

@test "a file without #! runs as a shell script, as the shell's exec runs it" {
    printf 'echo "script [$0] $*"\n' > "$BATS_TEST_TMPDIR/plain"
    chmod +x "$BATS_TEST_TMPDIR/plain"
    run "$RS" "$BATS_TEST_TMPDIR/plain" a 'b c'
    assert_success
    assert_output "script [$BATS_TEST_TMPDIR/plain] a b c"
}

@test "found through PATH as exec finds it: a file that cannot run is passed over, an empty entry is here" {
    mkdir -p "$BATS_TEST_TMPDIR/p1" "$BATS_TEST_TMPDIR/p2" "$BATS_TEST_TMPDIR/here"
    printf '#!/bin/sh\necho one\n' > "$BATS_TEST_TMPDIR/p1/prog"
    printf '#!/bin/sh\necho two\n' > "$BATS_TEST_TMPDIR/p2/prog"
    chmod 644 "$BATS_TEST_TMPDIR/p1/prog"
    chmod 755 "$BATS_TEST_TMPDIR/p2/prog"
    PATH="$BATS_TEST_TMPDIR/p1:$BATS_TEST_TMPDIR/p2:$PATH" run "$RS" prog
    assert_output two
    # Only one that cannot run: exec's own failure.
    PATH="$BATS_TEST_TMPDIR/p1:$PATH" run "$RS" prog
    assert_equal "$status" 126
    printf '#!/bin/sh\necho here\n' > "$BATS_TEST_TMPDIR/here/prog"
    chmod 755 "$BATS_TEST_TMPDIR/here/prog"
    cd "$BATS_TEST_TMPDIR/here"
    PATH=":$PATH" run "$RS" prog
    assert_output here
    PATH="$PATH" run -127 "$RS" prog
}

@test "LD_PRELOAD naming the shim by a hard link is left as it is: the loader takes it for the same file" {
    # Beside the library, on its file system.
    hard="$ROOT/build/wrapper-test-$$.so"
    ln -f "$SHIM_REAL" "$hard"
    LD_PRELOAD="$hard" run "$RS" sh -c 'echo "$LD_PRELOAD"'
    rm -f "$hard"
    assert_output "$hard"
}
