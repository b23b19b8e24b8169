#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The token contract (errno of every command, status page, yield, who may
# raise its share) through the explicit API, on the module or the arbiter.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ -n "$GS_TOKEN_TEST" ] || bail "gs-token-test not built"
service 20000 2000000
"$GS_TOKEN_TEST" >"$T/raw" 2>&1
rc=$?
sed "s/^\(not \)\{0,1\}ok [0-9]* - /&token: /; /^1\.\./d" "$T/raw" >"$T/out"
# Renumber its TAP into ours.
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) l=${line#not ok }; not_ok "${l#* - }" ;;
	*) echo "$line" ;;
	esac
done <"$T/out"
check "gs-token-test ran to its end (exit $rc, plan printed)" \
	sh -c "grep -q '^1\.\.[0-9]' '$T/raw' && [ $rc -lt 128 ]"
done_testing
