#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Processes under the library never have work on the modelled GPU at the
# same time, whatever way they reach the launch entry points; without the
# library they do (so the check can fail).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service "$(us 5000)" 500000

# Negative control: the double sees overlap when nothing schedules.
at=$(start_at)
run_bg raw1 env GS_START_AT=$at "$GS_CLIENT" --seconds 1 --kernel-us "$(us 500)"
run_bg raw2 env GS_START_AT=$at "$GS_CLIENT" --seconds 1 --kernel-us "$(us 500)"
wait_bg raw1; wait_bg raw2
v=$(violations)
if [ "${v:-0}" -gt 0 ]; then
	ok "without the library the double sees overlapping work ($v violations)"
else
	not_ok "without the library the double sees overlapping work (0 violations: the check is blind)"
fi
rm -f "$GS_DOUBLE_SHM"

at=$(start_at)
run_bg a client GS_START_AT=$at "$GS_CLIENT" --seconds 3 --kernel-us "$(us 300)" --route mixed --api mixed
run_bg b client GS_START_AT=$at "$GS_CLIENT" --seconds 3 --kernel-us "$(us 700)" --route runtime --ptsz --memcpy
run_bg c client GS_START_AT=$at "$GS_CLIENT" --seconds 3 --kernel-us "$(us 1000)" --route dlsym --api graph --capture
rc=0
for n in a b c; do wait_bg $n || rc=1; done
check "three clients ran without launch errors" [ $rc -eq 0 ]
v=$(violations)
check "no two processes had work on the GPU at once (violations=$v)" [ "$v" = 0 ]
sum=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^share=/) { sub("share=", "", $i); s += $i } } END { print s }' \
	"$T/a.out" "$T/b.out" "$T/c.out")
if [ "$GS_TEST_SCALE" = 1 ]; then	# not in an emulated VM: load-dependent
	check "they used the GPU between them (sum of shares $sum > 0.80)" above "$sum" 0.80
fi
check "launches arrived by symbol, cuGetProcAddress and dlsym" \
	sh -c "grep -q 'symbol=[1-9]' '$T/a.err' && grep -q 'procaddr=[1-9]' '$T/b.err' && grep -q 'dlsym=[1-9]' '$T/c.err'"
check "launches into a capturing stream passed untouched" grep -q 'captured=[1-9]' "$T/c.err"
check "every launch went through the gate" \
	sh -c "for n in a b c; do l=\$(awk '/stats/ { for (i = 1; i <= NF; i++) if (\$i ~ /^(launches|gated|captured)=/) print \$i }' '$T/'\$n.err | tr '\n' ' '); \
		set -- \$l; [ \"\${1#*=}\" = \$(( \${2#*=} + \${3#*=} )) ] || exit 1; done"
show a b c
done_testing
