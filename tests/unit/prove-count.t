#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/tools/prove-count's closing line on TAP written for it: skips are
# counted as skips, not passes, whether a SKIP directive, a script that
# skipped all, or a case skipped inside a program that a runner (such as
# tests/vm/run.sh) reports as one line with the program's TAP after it as
# comments, as the 6.1 kselftest harness prints it.
set -u
pc=$(cd "$(dirname "$0")/../tools" && pwd)/prove-count
T=$(mktemp -d "${TMPDIR:-/tmp}/prove-count.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0
failed=0
is() {	# is DESCRIPTION GOT WANT
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		failed=$((failed + 1))
		echo "not ok $n - $1"
		echo "#   got:  '$2'"
		echo "#   want: '$3'"
	fi
}
tap() {	# tap NAME: a test script printing standard input
	{ echo '#!/bin/sh'; echo "cat <<'TAP'"; cat; echo TAP; } >"$T/$1.t"
	chmod +x "$T/$1.t"
}
last() {	# last TEST...: prove-count's last line, and its exit status
	(cd "$T" && "$pc" "$@" >out 2>&1; echo "exit $?" >>out)
	tail -n 2 "$T/out" | tr '\n' ' ' | sed 's/ $//'
}

tap plain <<'TAP'
ok 1 - a
ok 2 - b
1..2
TAP
is "all passed" "$(last plain.t)" "2 passed, 0 failed, 0 skipped exit 0"

tap directive <<'TAP'
ok 1 - ran
ok 2 - # SKIP no daemon
ok 3 # skip lower case
1..3
TAP
is "SKIP directives are skips" "$(last directive.t)" \
	"1 passed, 0 failed, 2 skipped exit 0"

tap all <<'TAP'
1..0 # SKIP no device
TAP
is "a script that skipped all is one skip" "$(last all.t)" \
	"0 passed, 0 failed, 1 skipped exit 0"

# What tests/vm/run.sh makes of kselftest programs: one line each, then
# the program's output. 6.1's harness prints "ok N # SKIP reason" for a
# case that called SKIP() and exits 0 (4 only when all was skipped).
tap vm <<'TAP'
ok 1 - gpusched.ko builds
ok 2 - share
#   TAP version 13
#   1..2
#   # Starting 2 tests from 1 test cases.
#   #            OK  gs.weights
#   ok 1 gs.weights
#   #      SKIP      no cgroup
#   #            OK  gs.cgroup
#   ok 2 # SKIP no cgroup
#   # PASSED: 2 / 2 tests passed.
ok 3 - capacity
#   TAP version 13
#   1..1
#   ok 1 # SKIP not in the test VM
ok 4 - faultinject # SKIP
#   TAP version 13
#   1..0 # SKIP no CONFIG_FAULT_INJECTION
1..4
TAP
is "kselftest cases skipped inside a program are skips" "$(last vm.t)" \
	"2 passed, 0 failed, 3 skipped exit 0"
is "each skip is listed with its reason" \
	"$(grep '^# skipped' "$T/out" | tr '\n' '|')" \
	"# skipped vm.t: share: no cgroup|# skipped vm.t: capacity: not in the test VM|# skipped vm.t: faultinject: no CONFIG_FAULT_INJECTION|"

tap bad <<'TAP'
ok 1 - a
not ok 2 - b
1..3
TAP
is "failures and tests planned but not run are failures" \
	"$(last bad.t plain.t)" "3 passed, 2 failed, 0 skipped exit 1"

echo "1..$n"
[ "$failed" = 0 ]
