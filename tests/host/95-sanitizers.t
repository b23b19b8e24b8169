#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The library's tests again, with the library built under AddressSanitizer
# and UndefinedBehaviorSanitizer (build/san/, which make check builds): in
# none of their processes does either report a memory error, a leak of
# the library's, or undefined behaviour. Their own checks are not judged
# here: the sanitized library is several times slower, which their timing
# does not allow for; that each ran to its plan is. Not 10-lib-symbols
# (it reads the library's symbols, one file) nor 52-launch-clock (it
# preloads its clock interposer before the library, where the
# sanitizer's runtime must come first).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

san=$(find_file "$t_root/build/san/libgpusched/libgpusched.so.1") ||
	{ skip "no sanitized library (build/san/, made by make check)"; done_testing; }
asan=$(${CC:-cc} -print-file-name=libasan.so 2>/dev/null)
case $asan in
/*) ;;
*) skip "no AddressSanitizer runtime (libasan.so) beside ${CC:-cc}"; done_testing ;;
esac

# Leaks that are not the library's: the test double's own objects
# (contexts, streams, events), which live until the process exits as the
# driver's would after its context, and perl's (80-lib-badinput runs it
# under the library), which frees nothing at exit.
printf 'leak:libcuda.so\nleak:bin/perl\n' >"$T/lsan.supp"

# reports DIR: what the sanitizers wrote in DIR, printed; true when
# nothing but LeakSanitizer's note that a thread could not be stopped for
# its scan (a log that holds no report). Anything else fails: a report,
# or a runtime that could not start (its options, say).
reports() {
	bad=$(cat "$1"/* 2>/dev/null |
		grep -v -E '^==[0-9]+==Running thread [0-9]+ was not suspended\. False leaks are possible\.$')
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" | head -n 80 | sed 's/^/# /'
	return 1
}

# sanitized NAME CMD...: CMD with the sanitizers' logs in $T/NAME.san.
sanitized() {
	logs=$T/$1.san
	shift
	mkdir -p "$logs"
	ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1" \
	LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0" \
	UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1" \
	GS_LIB="$asan $san" "$@"
}

# The set-up itself: a client under the sanitized library runs, and its
# runtime says nothing.
service "$(us 10000)" 1000000
sanitized client env LD_PRELOAD="$asan $san" "$GS_CLIENT" --seconds 0.5 --kernel-us 200 \
	>"$T/client.out" 2>"$T/client.err"
rc=$?
check "a client under the sanitized library runs (exit $rc)" [ "$rc" = 0 ]
check "and launches ($(value launches "$T/client.out") kernels)" \
	above "$(value launches "$T/client.out")" 0
check "its runtime reports nothing" reports "$T/client.san"
stop_arbiter

for t in "$t_here"/*-lib-*.t; do
	name=${t##*/}
	case $name in
	10-lib-symbols.t | 52-launch-clock.t) continue ;;
	esac
	sanitized "$name" sh "$t" >"$T/$name.tap" 2>&1
	check "$name ran to its plan under the sanitized library" \
		grep -q '^1\.\.[1-9]' "$T/$name.tap"
	check "$name: no sanitizer report in its processes" reports "$T/$name.san"
done
done_testing
