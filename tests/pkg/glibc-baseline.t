#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libgpusched.so.1 is preloaded into the programs of old container images:
# the newest GLIBC_ symbol version it needs is at most 2.28 (x86_64; its
# binding is libgpusched/glibc-compat.h's), and it names libpthread.so.0
# and libdl.so.2, where glibc before 2.34 keeps those versions. The
# packaged library, built with Debian's flags, is checked by deb.t.
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/tap.sh

LIB=${1:-build/libgpusched/libgpusched.so.1}
BASELINE=2.28
[ -f "$LIB" ] || skip_all "$LIB not built (make user)"
LIB=$(realpath "$LIB")
case $(uname -m) in x86_64) ;; *) skip_all "the baseline is kept on x86_64 only" ;; esac

newest=$(objdump -T "$LIB" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
over=$(objdump -T "$LIB" | awk -v b="$BASELINE" '
	match($0, /GLIBC_[0-9][0-9.]*/) {
		v = substr($0, RSTART + 6, RLENGTH - 6)
		split(v, p, "."); split(b, q, ".")
		if (p[1] > q[1] || (p[1] == q[1] && p[2] + 0 > q[2] + 0)) print $NF "@GLIBC_" v
	}' | sort -u)
check "newest GLIBC_ version $LIB needs is $newest, at most $BASELINE" test -z "$over"
[ -n "$over" ] && { echo "newer than $BASELINE (bind them in libgpusched/glibc-compat.h):"; echo "$over"; } | diag
needed=$(objdump -p "$LIB" | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
check "it names libpthread.so.0 and libdl.so.2 (NEEDED: $needed)" \
	sh -c "echo '$needed' | grep -q 'libpthread.so.0' && echo '$needed' | grep -q 'libdl.so.2'"
check "a program that links neither loads it: LD_PRELOAD=libgpusched.so.1 /bin/true" \
	env LD_PRELOAD="$LIB" /bin/true
check "the explicit API's messages come from the replaced strerrordesc_np" \
	python3 -c 'import ctypes, sys
l = ctypes.CDLL(sys.argv[1]); l.gpusched_strerror.restype = ctypes.c_char_p
sys.exit(l.gpusched_strerror(-1) != b"Operation not permitted" or l.gpusched_strerror(-100000) != b"Unknown error")' "$LIB"
done_testing
