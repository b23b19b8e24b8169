# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/host/lib.sh and tests/unit/bench.t.
#
# Float comparisons with awk: within A B TOL (|A - B| <= TOL), above A B
# (A > B), below A B (A < B). Each is false unless every argument is a
# decimal number: a figure missing from a client's output (empty), or
# awk's "nan" from a division by zero, compares true with some operators
# and would pass the check it was to fail.
GS_AWK_NUM='function num(x) { return x ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }'
within() {
	awk -v a="$1" -v b="$2" -v t="$3" "$GS_AWK_NUM"'
	BEGIN { if (!num(a) || !num(b) || !num(t)) exit 1
		d = a - b; if (d < 0) d = -d; exit !(d <= t + 0) }'
}
above() {
	awk -v a="$1" -v b="$2" "$GS_AWK_NUM"'
	BEGIN { exit !(num(a) && num(b) && a + 0 > b + 0) }'
}
below() {
	awk -v a="$1" -v b="$2" "$GS_AWK_NUM"'
	BEGIN { exit !(num(a) && num(b) && a + 0 < b + 0) }'
}
