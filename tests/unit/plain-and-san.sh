#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/unit/plain-and-san.sh NAME [ARG...]: the host unit tests
# build/tests/unit/NAME (a tap.h program) as one TAP stream, then the same
# tests built with ASan+UBSan (NAME-san, numbered after the first). Builds
# them if needed. The other arguments go to both programs. policy.t and
# period.t are this with their NAME.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$top" || exit 1
bin=build/tests/unit/$1
san=build/tests/unit/$1-san
shift

if command -v make >/dev/null 2>&1; then
	# Before the top Makefile includes the fragment, name it here.
	mk=
	grep -qs 'tests/unit/build.mk' Makefile tests/build.mk ||
		mk="-f Makefile -f tests/unit/build.mk"
	# Under `make -jN check` the parent's jobserver does not reach us
	# (prove is in between): drop it, keep its variables (CC=...).
	MAKEFLAGS=$(printf '%s' "${MAKEFLAGS-}" |
		sed 's/ *--jobserver-[a-z]*=[^ ]*//; s/ *-j[0-9]*//')
	export MAKEFLAGS
	# shellcheck disable=SC2086
	make -s -j2 $mk "$bin" "$san" >&2 || {
		echo "Bail out! cannot build $bin and $san"
		exit 1
	}
fi
for b in "$bin" "$san"; do
	[ -x "$b" ] || { echo "Bail out! $b missing"; exit 1; }
done

n=$("$bin" --count "$@") || { echo "Bail out! $bin --count failed"; exit 1; }
echo "1..$((2 * n))"
# The sanitized run goes on beside the plain one; its TAP follows it.
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	"$san" --no-plan --offset "$n" --suffix " [asan,ubsan]" "$@" >"$out" &
pid=$!
rc=0
"$bin" --no-plan "$@" || rc=1
wait "$pid" || rc=1
cat "$out"
exit $rc
