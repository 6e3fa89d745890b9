# libresumeshim: `make` builds the library, `make test` runs the suite,
# `make demo` shows it at work, `make bench` measures it; all three install
# missing Debian packages. `make install` (PREFIX, DESTDIR) installs the
# library, the resumeshim command and the manual pages resumeshim(1) and
# libresumeshim(7); `make uninstall` removes them.
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
VERSION := $(shell sed -n 's/^version=//p' scripts/resumeshim)

# Two layers: shim/core/ knows no TLS library (sessions reach it through
# include/seam.h); a backend a library: shim/openssl/ and shim/gnutls/,
# each speaking its library and driving the core.
CORE_SRCS := $(wildcard shim/core/*.c)
OSSL_SRCS := $(wildcard shim/openssl/*.c)
GTLS_SRCS := $(wildcard shim/gnutls/*.c)
SRCS := $(CORE_SRCS) $(OSSL_SRCS) $(GTLS_SRCS)
OBJS := $(SRCS:shim/%.c=build/obj/%.o)
HDRS := $(wildcard include/*.h shim/*/*.h shim/*/*.def)
TESTBIN := tests/bin/client tests/bin/pskserver tests/bin/fuzzstore tests/bin/delayrelay \
           tests/bin/lifecycle tests/bin/vhostserver tests/bin/vhostclient tests/bin/policyserver \
           tests/bin/gnutlsclient tests/bin/dualclient tests/bin/verifyedge tests/bin/unit \
           tests/bin/trustload

all: libresumeshim.so

# The version script names exactly the hooks of shim/openssl/hooks.def, under
# OpenSSL 3's symbol version, so a program linked to OpenSSL 1.1 never binds
# to them, and those of shim/gnutls/hooks.def, each under the GnuTLS version
# it names. -z defs proves the shim references no TLS library's symbol
# directly.
build/shim.map: shim/openssl/hooks.def shim/gnutls/hooks.def | build
	{ echo 'OPENSSL_3.0.0 {'; echo ' global:'; \
	  sed -n 's/^HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/  \1;/p' shim/openssl/hooks.def; \
	  echo ' local: *;'; echo '};'; \
	  for v in GNUTLS_3_4 GNUTLS_3_6_3; do echo "$$v {"; echo ' global:'; \
	    sed -n "s/^GHOOK([^,]*, *\([a-z0-9_]*\),.*, *$$v)\$$/  \1;/p" shim/gnutls/hooks.def; \
	    [ $$v = GNUTLS_3_4 ] && echo '};' || echo '} GNUTLS_3_4;'; done; } > $@

build tests/bin:
	mkdir -p $@

# Each object depends on the headers it includes (-MMD), and on nothing
# else: an edit rebuilds what it touches.
build/obj/core build/obj/openssl build/obj/gnutls:
	mkdir -p $@

build/obj/core/%.o: shim/core/%.c | build/obj/core
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

build/obj/openssl/%.o: shim/openssl/%.c | build/obj/openssl
	$(CC) $(CFLAGS) -Ishim/openssl -MMD -MP -c -o $@ $<

build/obj/gnutls/%.o: shim/gnutls/%.c | build/obj/gnutls
	$(CC) $(CFLAGS) -Ishim/gnutls -MMD -MP -c -o $@ $<

-include $(OBJS:.o=.d)

# The seam, proved: no object of the core may have read a TLS library's
# header, directly or through another header (its -MMD list says which it
# read).
build/core.ok: $(CORE_SRCS:shim/%.c=build/obj/%.o)
	@if grep -lE '(^|[ /])(openssl|gnutls)/' $(^:.o=.d); then \
	    echo "shim/core/ includes a TLS library's header" >&2; exit 1; fi
	@touch $@

libresumeshim.so: $(OBJS) build/shim.map build/core.ok
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

tests/bin/%: tests/%.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto -lpthread

# The GnuTLS test client: a program of the second backend.
tests/bin/gnutlsclient tests/bin/verifyedge: tests/bin/%: tests/%.c | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -lgnutls -lpthread

tests/bin/dualclient tests/bin/verifyedge: tests/connect.h

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
tests/bin/fuzzstore: tests/fuzzstore.c shim/core/record.c shim/core/util.c shim/core/record.h | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Ishim/core $(SAN) -o $@ \
	    tests/fuzzstore.c shim/core/record.c shim/core/util.c

# The unit tier: the core alone, driven by a fake backend (tests/unit/),
# under the sanitizers. It links no TLS library and sees no backend header,
# so it also proves the core stands without OpenSSL.
UNIT_SRCS := $(wildcard tests/unit/*.c)
tests/bin/unit: $(UNIT_SRCS) $(wildcard tests/unit/*.h) $(CORE_SRCS) \
                $(wildcard include/*.h shim/core/*.h) | tests/bin
	$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Iinclude -Ishim/core \
	    -Itests/unit $(SAN) -o $@ $(UNIT_SRCS) $(CORE_SRCS) -lpthread

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
	    $(CC) $(CFLAGS) -I$${f%/*} $(SAN) -c -o build/asan/$$(echo $${f#shim/} | tr / -).o $$f \
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
install: libresumeshim.so | build
	sed "s|^libdir=.*|libdir='$(LIBDIR)'|" scripts/resumeshim > build/resumeshim
	sed 's/@VERSION@/$(VERSION)/' scripts/resumeshim.1 > build/resumeshim.1
	sed 's/@VERSION@/$(VERSION)/' scripts/libresumeshim.7 > build/libresumeshim.7
	install -d "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" \
	    "$(DESTDIR)$(MANDIR)/man7"
	install -m 644 libresumeshim.so "$(DESTDIR)$(LIBDIR)/libresumeshim.so"
	install -m 755 build/resumeshim "$(DESTDIR)$(BINDIR)/resumeshim"
	install -m 644 build/resumeshim.1 "$(DESTDIR)$(MANDIR)/man1/resumeshim.1"
	install -m 644 build/libresumeshim.7 "$(DESTDIR)$(MANDIR)/man7/libresumeshim.7"

uninstall:
	rm -f "$(DESTDIR)$(LIBDIR)/libresumeshim.so" "$(DESTDIR)$(BINDIR)/resumeshim" \
	      "$(DESTDIR)$(MANDIR)/man1/resumeshim.1" "$(DESTDIR)$(MANDIR)/man7/libresumeshim.7"

# Measurements, not tests: results in examples/bench (committed) or, quick
# and smaller, in build/bench-quick.
bench: deps all test-programs
	scripts/bench

bench-quick: deps all test-programs
	scripts/bench --quick

clean:
	rm -rf build tests/bin libresumeshim.so

.PHONY: all deps test test-asan test-programs unit demo bench bench-quick install uninstall clean
