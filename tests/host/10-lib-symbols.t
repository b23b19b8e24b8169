#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libgpusched exports exactly its API and the entry points it interposes:
# a preloaded library that leaks symbols breaks programs.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

expected=$(find_file "$t_here/libgpusched.symbols" /usr/lib/gpusched/libgpusched.symbols)
if ! command -v nm >/dev/null 2>&1 || ! command -v readelf >/dev/null 2>&1; then
	skip "nm/readelf not available (binutils)"
	done_testing
fi

nm -D --defined-only "$GS_LIB" | awk '{ print $3 }' | sed 's/@.*//' | LC_ALL=C sort >"$T/got"
LC_ALL=C sort "$expected" >"$T/want"
if diff -u "$T/want" "$T/got" >"$T/diff"; then
	ok "exported symbols are exactly tests/host/libgpusched.symbols ($(wc -l <"$T/want") names)"
else
	not_ok "exported symbols differ from tests/host/libgpusched.symbols"
	diag "$T/diff"
fi

# The interposed ones must be unversioned, or dlsym@GLIBC_2.34 and the
# cu* references of programs would not bind to them.
if nm -D --defined-only "$GS_LIB" | grep -q '@'; then
	not_ok "no exported symbol carries a version"
	nm -D --defined-only "$GS_LIB" | grep '@' | diag
else
	ok "no exported symbol carries a version"
fi

check "soname is libgpusched.so.1" \
	sh -c "readelf -d '$GS_LIB' | grep -q 'SONAME.*\\[libgpusched.so.1\\]'"
check "no text relocations, no executable stack" \
	sh -c "! readelf -d '$GS_LIB' | grep -q TEXTREL && readelf -lW '$GS_LIB' | grep GNU_STACK | grep -qv RWE"
# Undefined references only to libc and the loader (-z defs held), and
# libpthread and libdl, where glibc before 2.34 has the functions the
# library binds to (libgpusched/glibc-compat.h).
check "needs only libc, libpthread, libdl and the dynamic loader" \
	sh -c "readelf -d '$GS_LIB' | awk '/NEEDED/ { print \$NF }' | grep -Ev 'libc.so.6|libpthread.so.0|libdl.so.2|ld-linux' | grep -q . && exit 1 || exit 0"
done_testing
