# SPDX-License-Identifier: GPL-2.0
# TAP for the packaging tests (sourced): numbered lines, the plan at the end.
gs_n=0
gs_failed=0

# check DESCRIPTION COMMAND...: ok if COMMAND succeeds; its output becomes
# diagnostics when it fails. Returns COMMAND's success.
check() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	gs_n=$((gs_n + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $gs_n - $what"
	else
		gs_failed=$((gs_failed + 1))
		echo "not ok $gs_n - $what"
		[ -n "$out" ] && printf '%s\n' "$out" | tail -n 40 | diag
	fi
	return "$rc"
}
skip() {
	gs_n=$((gs_n + 1))
	echo "ok $gs_n - $1 # SKIP $2"
}
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}
diag() {
	sed 's/^/#   /'
}
diag_file() {
	[ -f "$1" ] && tail -n "${2:-60}" "$1" | diag
}
done_testing() {
	echo "1..$gs_n"
	[ "$gs_failed" = 0 ]
}
# For check: succeeds when the command fails.
not() {
	! "$@"
}
