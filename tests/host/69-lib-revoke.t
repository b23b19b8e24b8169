#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Revocation through the library: a process whose kernels outlast the
# time slice and the grace time is revoked, by the module (in the VM) or
# the arbiter (on the host). Each revoked grant is counted once, the
# revoked process launches nothing until it holds the token again, and it
# runs to its end.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

# service_count NAME KEY: the service's count KEY for client NAME, from its
# counters line (GPUSCHED_DEBUG=stats).
service_count() {
	grep 'stats GPU-.*: service ' "$T/$1.err" | value "$2" -
}

# Every kernel of the long process (50 ms) outlasts the slice and the
# grace time (5 + 20 ms), so its grants end revoked with its kernel running
# whenever the neighbour waits and is due (the policy may give a grant
# more slices first). The neighbour's kernels (0.5 ms) drain well within
# the grace. It starts first and ends last. In the VM, where lengths are
# 10 times longer, both run longer so that the long process has several
# grants.
service "$(us 5000)" "$(us 20000)"
long_s=1.5 short_s=3
[ "$GS_TEST_SCALE" = 1 ] || { long_s=4; short_s=8; }
at=$(start_at)
run_bg short client GS_START_AT="$at" "$GS_CLIENT" --seconds "$short_s" \
	--kernel-us "$(us 500)"
run_bg long client GS_START_AT="$((at + $(us 200000) * 1000))" "$GS_CLIENT" --seconds "$long_s" \
	--kernel-us "$(us 50000)" --period-us "$(us 50000)"
check "the revoked process ran to its end" wait_bg long
check "its neighbour ran to its end" wait_bg short

errors=$(value errors "$T/long.out")
launches=$(value launches "$T/long.out")
revoked=$(grep 'stats launches=' "$T/long.err" | value revoked -)
overruns=$(service_count long overruns)
echo "# long: $launches launches, $revoked grants found revoked, $overruns overruns counted"
check "its launches all succeeded (errors=$errors)" [ "${errors:-1}" = 0 ]
check "it found grants revoked ($revoked)" [ "${revoked:-0}" -ge 1 ]
check "one overrun counted per revoked grant ($overruns overruns, $revoked revoked)" \
	[ "${overruns:-x}" = "$revoked" ]
# A launch over another process's kernel is one without the token, unless
# that kernel is what a revoked grant of the other left running: the long
# process launches once a grant, so at most once per revocation of its
# neighbour (none is expected: its kernels drain within the grace time).
over=$(value launched_over "$T/long.out")
nover=$(service_count short overruns)
check "it launched nothing while another process's work ran (launched_over=$over, neighbour's overruns $nover)" \
	[ "${over:-1}" -le "${nover:-0}" ]
# That check can see such a launch: the neighbour's first launches after
# each revocation meet the long kernel still running.
over=$(value launched_over "$T/short.out")
check "the neighbour launched beside the revoked kernel (launched_over=$over)" \
	[ "${over:-0}" -ge 1 ]
show long short
done_testing
