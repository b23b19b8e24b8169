#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`'s main job, as the README runs it, on a machine without a
# GPU: the module in a VM on Debian's 6.1 kernel, three busy clients with
# weights 1:2:4. The demo must run, show the three clients, and divide the
# token by weight to within 5 points.
cd "$(dirname "$0")/../.." || exit 1
n=0
failed=0
check() {	# check DESCRIPTION COMMAND...
	d=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d"; fi
}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "1..0 # SKIP a GPU is here: the demo runs on it, not in a VM"
	exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/demo/demo.sh >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
check "tests/demo/demo.sh ran (exit $rc)" [ $rc = 0 ]
check "it shows the three clients and their weights" \
	sh -c "grep -Eq '^1 +100 ' '$out' && grep -Eq '^2 +200 ' '$out' && grep -Eq '^3 +400 ' '$out'"
pts=$(sed -n 's/^largest difference from the weights: \([0-9.]*\) points.*/\1/p' "$out")
check "the token was divided by weight (${pts:-no figure} points off, at most 5)" \
	awk -v p="${pts:-99}" 'BEGIN { exit !(p <= 5) }'
echo "1..$n"
[ $failed = 0 ]
