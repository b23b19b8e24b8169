#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tap-valgrind.sh BIN [ARG]...
#
# Run a host test program built on tests/unit/tap.h as one TAP stream: the
# program, then the same program under valgrind (numbered after the first),
# then valgrind's verdict, which fails on any memory error and any leak.
# Without valgrind, the second half is skipped. Used by tests/unit/*.t of
# the daemon's parts; they build BIN first.
set -u
bin=$1
shift
[ -x "$bin" ] || { echo "Bail out! $bin missing"; exit 1; }

n=$("$bin" --count "$@") || { echo "Bail out! $bin --count failed"; exit 1; }
echo "1..$((2 * n + 1))"
rc=0
"$bin" --no-plan "$@" || rc=1

if ! command -v valgrind >/dev/null 2>&1; then
	i=$n
	while [ "$i" -le $((2 * n)) ]; do
		i=$((i + 1))
		echo "ok $i # SKIP valgrind is not installed"
	done
	exit $rc
fi
log=$bin.valgrind.log
# "Still reachable" blocks are glibc's own (NSS modules that getpwnam()
# loads); definite, indirect and possible leaks are ours.
valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible \
	--error-exitcode=99 --log-file="$log" \
	"$bin" --no-plan --offset "$n" --suffix " [valgrind]" "$@"
vrc=$?
if [ "$vrc" -eq 99 ] || [ -s "$log" ]; then
	echo "not ok $((2 * n + 1)) - valgrind: no memory errors, no leaks"
	sed 's/^/#   /' "$log"
	rc=1
else
	echo "ok $((2 * n + 1)) - valgrind: no memory errors, no leaks"
	[ "$vrc" -eq 0 ] || rc=1
fi
exit $rc
