# libresumeshim: `make` builds the library and the resumeshim command, `make test` runs the suite,
# `make demo` shows it at work, `make bench` measures it; all three install
# missing Debian packages. `make install` (PREFIX, DESTDIR) installs the
# library, the resumeshim command and the manual pages resumeshim(1) and
# libresumeshim(7); `make uninstall` removes them. `make deb` builds the
# Debian package into build/.
CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -D_GNU_SOURCE -Iinclude \
           -Ishim/core
# The initial-exec TLS model: the shim is preloaded, so its few per-thread
# variables live in the static TLS block, where each access is one
# instruction rather than a call of __tls_get_addr (about 40 instructions
# per SSL_read/SSL_write), and the library needs no ld.so of its own, which
# the loader would otherwise check at every program's start.
CFLAGS  += -ftls-model=initial-exec
# -Bsymbolic: the shim's references to its own hooks are bound at link
# time, so loading it costs no symbol lookups, even in a program without TLS.
LDFLAGS += -shared -Wl,-z,defs -Wl,-Bsymbolic -Wl,--version-script=build/shim.map
LDLIBS  += -ldl -lpthread
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
MANDIR  ?= $(PREFIX)/share/man
VERSION := $(shell sed -n 's/^\#define VERSION "\(.*\)"$$/\1/p' cmd/resumeshim.c)

# Two layers: shim/core/ knows no TLS library (sessions reach it through
# include/seam.h); a backend a library: shim/openssl/ and shim/gnutls/,
# each speaking its library and driving the core.
# A layer's rooms are its folders, one level deep; a room's file names the
# layer's own headers by name (-Ishim/LAYER), its room's by path.
CORE_SRCS := $(wildcard shim/core/*.c shim/core/*/*.c)
OSSL_SRCS := $(wildcard shim/openssl/*.c shim/openssl/*/*.c)
GTLS_SRCS := $(wildcard shim/gnutls/*.c shim/gnutls/*/*.c)
SRCS := $(CORE_SRCS) $(OSSL_SRCS) $(GTLS_SRCS)
OBJS := $(SRCS:shim/%.c=build/obj/%.o)
HDRS := $(wildcard include/*.h shim/*/*.h shim/*/*.def shim/*/*/*.h shim/*/*/*.def)
CMD_SRCS := $(wildcard cmd/*.c)
CMD_OBJS := $(CMD_SRCS:cmd/%.c=build/obj/cmd/%.o)
# The core files the command links: the store's listing, and what it calls.
CMD_CORE_OBJS := $(patsubst %,build/obj/cmd/core/%.o,store/list store/dir store/lock store/names store/record util log fork key)
# The command is built with musl, statically, when musl-gcc is there
# (scripts/deps installs it): glibc's start-up reads the CPU's features
# with some 70 CPUID instructions, each a trap to the hypervisor on a
# virtual machine (6.5 us each on the bench's), which a process started
# only to exec another would pay twice; musl's reads none. Otherwise cc.
CMD_CC := $(shell command -v musl-gcc 2>/dev/null)
CMD_LDFLAGS := $(if $(CMD_CC),-static)
CMD_CC := $(or $(CMD_CC),$(CC))
# Each page the command touches is a fault of its own, a few microseconds
# on a virtual machine: only the code it uses, in one segment.
CMD_CFLAGS := -ffunction-sections -fdata-sections
CMD_LDFLAGS += -Wl,--gc-sections -Wl,-z,noseparate-code
# A build ID, as cc gives every program and musl-gcc does not: debuggers,
# and a package's debug symbols, find the program's by it.
CMD_LDFLAGS += -Wl,--build-id
TESTBIN := \
    tests/bin/client \
    tests/bin/pskserver \
    tests/bin/fuzzstore \
    tests/bin/delayrelay \
    tests/bin/lifecycle \
    tests/bin/vhostserver \
    tests/bin/vhostclient \
    tests/bin/policyserver \
    tests/bin/gnutlsclient \
    tests/bin/dualclient \
    tests/bin/verifyedge \
    tests/bin/unit \
    tests/bin/trustload \
    tests/bin/gnutrust \
    tests/bin/sizedname \
    tests/bin/sysconfig \
    tests/bin/certcbclient \
    tests/bin/srpclient \
    tests/bin/serialclient \
    tests/bin/fakever.so \
    tests/bin/nomemhash.so \
    tests/bin/vtimecheck \
    tests/bin/sigkeycheck \
    tests/bin/keyfactcheck \
    tests/bin/lookupkey \
    tests/bin/tzpurpose \
    tests/bin/localnettle \
    tests/bin/nodelayclient \
    tests/bin/corkclient \
    tests/bin/halfslot \
    tests/bin/policyclient \
    tests/bin/ccengine.so

all: libresumeshim.so build/resumeshim scripts/resumeshim

# The version script names exactly the hooks of shim/openssl/hooks.def, under
# OpenSSL 3's symbol version (or the later one a hook's line names), so a program linked to OpenSSL 1.1 never binds
# to them, and those of shim/gnutls/hooks.def, each under the GnuTLS version
# it names, and those of shim/gnutls/nettle.def under Nettle's. -z defs proves the shim references no TLS library's symbol
# directly.
build/shim.map: shim/openssl/hooks.def shim/gnutls/hooks.def shim/gnutls/nettle.def | build
	{ echo 'OPENSSL_3.0.0 {'; echo ' global:'; \
	  sed -n '/OPENSSL_3\.3\.0/!s/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/  \1;/p' shim/openssl/hooks.def; \
	  echo ' local: *;'; echo '};'; \
	  echo 'OPENSSL_3.3.0 {'; echo ' global:'; \
	  sed -n 's/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*OPENSSL_3\.3\.0.*/  \1;/p' shim/openssl/hooks.def; \
	  echo '} OPENSSL_3.0.0;'; \
	  for v in $$(sed -n 's/^GHOOK(.*, *\(GNUTLS_[0-9_]*\))$$/\1/p' shim/gnutls/hooks.def | \
	              sort -t_ -k2,2n -k3,3n -k4,4n -u); do echo "$$v {"; echo ' global:'; \
	    sed -n "s/^GHOOK([^,]*, *\([a-z0-9_]*\),.*, *$$v)\$$/  \1;/p" shim/gnutls/hooks.def; \
	    [ $$v = GNUTLS_3_4 ] && echo '};' || echo '} GNUTLS_3_4;'; done; \
	  for v in $$(sed -n 's/^NHOOK(.*, *\(HOGWEED_[0-9]*\))$$/\1/p' shim/gnutls/nettle.def | sort -u); do \
	    echo "$$v {"; echo ' global:'; \
	    sed -n "s/^NHOOK(\([a-z0-9_]*\), *$$v)\$$/  \1;/p" shim/gnutls/nettle.def; echo '};'; done; } > $@

build tests/bin:
	mkdir -p $@

# The tree's path, rewritten only when it changed (a tree moved or copied):
# scripts/resumeshim names it.
build/tree-path: FORCE | build
	@[ "$$(cat $@ 2>/dev/null)" = '$(CURDIR)' ] || echo '$(CURDIR)' > $@

FORCE:

# Each object depends on the headers it includes (-MMD), and on nothing
# else: an edit rebuilds what it touches.
build/install:
	mkdir -p $@

build/obj/core/%.o: shim/core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

build/obj/openssl/%.o: shim/openssl/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ishim/openssl -MMD -MP -c -o $@ $<

build/obj/gnutls/%.o: shim/gnutls/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ishim/gnutls -MMD -MP -c -o $@ $<

build/obj/cmd/%.o: cmd/%.c
	@mkdir -p $(@D)
	$(CMD_CC) $(CFLAGS) $(CMD_CFLAGS) -MMD -MP -c -o $@ $<

# The same core sources, compiled for the command's C library.
build/obj/cmd/core/%.o: shim/core/%.c
	@mkdir -p $(@D)
	$(CMD_CC) $(CFLAGS) $(CMD_CFLAGS) -MMD -MP -c -o $@ $<

-include $(OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(CMD_CORE_OBJS:.o=.d)

# The seam, proved: no object of the core may have read a TLS library's
# header, directly or through another header (its -MMD list says which it
# read).
build/core.ok: $(CORE_SRCS:shim/%.c=build/obj/%.o)
	@if grep -lE '(^|[ /])(openssl|gnutls)/' $(^:.o=.d); then \
	    echo "shim/core/ includes a TLS library's header" >&2; exit 1; fi
	@touch $@

libresumeshim.so: $(OBJS) build/shim.map build/core.ok
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

# The resumeshim command (cmd/): a program of its own, linked with the
# core's store rooms, so that list and clear read and empty the store with
# the library's code; it links no TLS library (build/core.ok). In the tree
# it finds the library beside it; installed, where make install put it.
build/resumeshim: $(CMD_OBJS) $(CMD_CORE_OBJS) build/core.ok
	$(CMD_CC) $(CFLAGS) $(CMD_LDFLAGS) -o $@ $(CMD_OBJS) $(CMD_CORE_OBJS)

# The tree's command, as the suite and the examples run it: a file whose
# first line has the kernel run build/resumeshim on it (no shell starts),
# which then looks for the library beside the directory of this file, as
# the script that preceded it did, copies and symbolic links included. It
# also says, for whoever reads it, the version and the variables the
# command sets. The path goes in a #! line: no space, and not too long.
scripts/resumeshim: build/resumeshim cmd/resumeshim.c build/tree-path
	@case '$(CURDIR)' in *[' 	:']*) echo "$(CURDIR): a space or colon in the tree's path" >&2; \
	    exit 1;; esac; [ $$(printf %s '$(CURDIR)' | wc -c) -lt 200 ] || \
	    { echo "$(CURDIR): too long a path for a #! line" >&2; exit 1; }
	{ echo '#!$(CURDIR)/build/resumeshim'; \
	  echo '# resumeshim, the command of this tree, made by make from cmd/ (see the Makefile).'; \
	  echo 'version=$(VERSION)'; \
	  echo "# It sets $$(grep -o '"RESUMESHIM_[A-Z_]*"' cmd/resumeshim.c | tr -d '"' | \
	    sort -u | tr '\n' ' ')"; } > $@.tmp
	chmod 755 $@.tmp
	mv $@.tmp $@

tests/bin/%: tests/%.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto -lpthread

# The GnuTLS test client: a program of the second backend.
tests/bin/gnutlsclient tests/bin/verifyedge tests/bin/gnutrust tests/bin/corkclient tests/bin/sizedname tests/bin/sysconfig: tests/bin/%: tests/%.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lgnutls -lpthread

# Nettle loaded into a local scope: dlopen only, no link to it.
tests/bin/localnettle: tests/localnettle.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -ldl

tests/bin/dualclient tests/bin/verifyedge tests/bin/srpclient tests/bin/nodelayclient \
    tests/bin/halfslot tests/bin/policyclient tests/bin/lookupkey tests/bin/tzpurpose: tests/connect.h
tests/bin/certcbclient tests/bin/srpclient tests/bin/halfslot tests/bin/policyclient: tests/sslget.h
tests/bin/sizedname tests/bin/verifyedge tests/bin/sysconfig: tests/gnutlsget.h tests/connect.h

# A client-certificate ENGINE, loaded by path (tests/policyclient.c).
tests/bin/ccengine.so: tests/ccengine.c | tests/bin
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $< -lssl -lcrypto

# The libraries' word on their release, made up (tests/versions.bats).
tests/bin/fakever.so: tests/fakever.c tests/fakever.map | tests/bin
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -Wl,--version-script=tests/fakever.map \
	    -o $@ $< -ldl

# Hash tables the shim cannot make (tests/hostile.bats).
tests/bin/nomemhash.so: tests/nomemhash.c | tests/bin
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl

# A program with both libraries.
tests/bin/dualclient: tests/dualclient.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto -lgnutls

tests/bin/pskserver tests/bin/vhostserver tests/bin/delayrelay tests/bin/policyserver: tests/listen.h
tests/bin/client tests/bin/client-static tests/bin/pskserver: tests/libctx.h

# The same client linked statically: a program the shim cannot reach. The
# linker's warnings about getaddrinfo and dlopen in static programs do not
# concern it (it calls neither).
tests/bin/client-static: tests/client.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -Wl,--no-warnings \
	    -o $@ $< -lssl -lcrypto -lpthread

# The store's file reader alone, under the sanitizers, for fuzzing.
tests/bin/fuzzstore: tests/fuzzstore.c shim/core/store/record.c shim/core/util.c shim/core/store/record.h | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Ishim/core $(SAN) -o $@ \
	    tests/fuzzstore.c shim/core/store/record.c shim/core/util.c

# The shim's validity-time answers against libcrypto's own.
tests/bin/vtimecheck: tests/vtimecheck.c shim/openssl/judge/vtime.c shim/openssl/judge/vtime.h | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $(SAN) -o $@ \
	    tests/vtimecheck.c shim/openssl/judge/vtime.c -lcrypto

# The layout the signature cache keys on, on the running libcrypto.
tests/bin/sigkeycheck: tests/sigkeycheck.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $(SAN) -o $@ tests/sigkeycheck.c -lcrypto

# run under the shim: no sanitizer runtime of their own
tests/bin/keyfactcheck tests/bin/lookupkey tests/bin/tzpurpose: tests/bin/%: tests/%.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto

# The unit tier: the core alone, driven by a fake backend (tests/unit/),
# under the sanitizers. It links no TLS library and sees no backend header,
# so it also proves the core stands without OpenSSL.
UNIT_SRCS := $(wildcard tests/unit/*.c)
tests/bin/unit: $(UNIT_SRCS) $(wildcard tests/unit/*.h) $(CORE_SRCS) cmd/sha256.c cmd/sha256.h \
                $(wildcard include/*.h shim/core/*.h shim/core/*/*.h) | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Iinclude -Ishim/core \
	    -Itests/unit -Icmd $(SAN) -o $@ $(UNIT_SRCS) $(CORE_SRCS) cmd/sha256.c -lpthread

unit: tests/bin/unit
	tests/bin/unit

test-programs: $(TESTBIN) tests/bin/client-static

# The same suite with the shim built under AddressSanitizer and
# UndefinedBehaviorSanitizer. The sanitizer runtime must come first in
# LD_PRELOAD; leak checking is left to valgrind (the host programs' own
# exit-time allocations would drown it).
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
build/asan/libresumeshim.so: $(SRCS) $(HDRS) build/shim.map
	mkdir -p build/asan
	rm -f build/asan/*.o
	for f in $(SRCS); do \
	    $(CC) $(CFLAGS) -I$$(echo $$f | cut -d/ -f1-2) $(SAN) -c -o build/asan/$$(echo $${f#shim/} | tr / -).o $$f \
	    || exit 1; done
	$(CC) $(CFLAGS) $(SAN) $(LDFLAGS) -o $@ build/asan/*.o $(LDLIBS)

test-asan: deps build/asan/libresumeshim.so all test-programs
	SHIM_PRELOAD="$$($(CC) -print-file-name=libasan.so) $(CURDIR)/build/asan/libresumeshim.so" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	scripts/run-tests

deps:
	scripts/deps

# The unit tier first: it fails in a second where the suites take minutes.
# tests/unit.bats runs it again, so that the last line counts it.
test: deps all test-programs
	tests/bin/unit
	scripts/run-tests

demo: deps all test-programs
	examples/demo

# The command learns where the library went, the manual pages their version;
# made afresh each time, since they depend on the variables of this run.
install: libresumeshim.so $(CMD_OBJS) $(CMD_CORE_OBJS) | build/install
	$(CMD_CC) $(CFLAGS) $(CMD_CFLAGS) $(CMD_LDFLAGS) -DLIBDIR='"$(LIBDIR)"' \
	    -o build/install/resumeshim \
	    cmd/resumeshim.c \
	    $(filter-out build/obj/cmd/resumeshim.o,$(CMD_OBJS)) $(CMD_CORE_OBJS)
	sed 's/@VERSION@/$(VERSION)/' scripts/resumeshim.1 > build/resumeshim.1
	sed 's/@VERSION@/$(VERSION)/' scripts/libresumeshim.7 > build/libresumeshim.7
	install -d "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" \
	    "$(DESTDIR)$(MANDIR)/man7"
	install -m 644 libresumeshim.so "$(DESTDIR)$(LIBDIR)/libresumeshim.so"
	install -m 755 build/install/resumeshim "$(DESTDIR)$(BINDIR)/resumeshim"
	install -m 644 build/resumeshim.1 "$(DESTDIR)$(MANDIR)/man1/resumeshim.1"
	install -m 644 build/libresumeshim.7 "$(DESTDIR)$(MANDIR)/man7/libresumeshim.7"

uninstall:
	rm -f "$(DESTDIR)$(LIBDIR)/libresumeshim.so" "$(DESTDIR)$(BINDIR)/resumeshim" \
	      "$(DESTDIR)$(MANDIR)/man1/resumeshim.1" "$(DESTDIR)$(MANDIR)/man7/libresumeshim.7"

# The Debian package (debian/), built out of a copy of the tree: build/*.deb.
deb:
	scripts/deb

# Measurements, not tests: results in examples/bench (committed) or, quick
# and smaller, in build/bench-quick.
bench: deps all test-programs
	scripts/bench

bench-quick: deps all test-programs
	scripts/bench --quick

clean:
	rm -rf build tests/bin libresumeshim.so scripts/resumeshim

.PHONY: FORCE all deps test test-asan test-programs unit demo bench bench-quick install uninstall deb \
        clean
