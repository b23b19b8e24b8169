#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# gpusched-run starts a program under the library with its settings.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ -n "$GS_RUN" ] || bail "gpusched-run not built"
export GPUSCHED_LIBRARY="$GS_LIB"
service 10000 200000

"$GS_RUN" --help >"$T/help" 2>&1
check "--help exits 0 and lists the options" sh -c "[ $? = 0 ] && grep -q -- '--weight' '$T/help'"
for bad in "--weight 0 -- true" "--weight x -- true" "--class fast -- true" \
	"--cap 101 -- true" "--label '' -- true" "" "--bogus -- true" \
	"--mem-limit 0 -- true" "--mem-limit 20X -- true" "--mem-limit 101% -- true"; do
	eval "\"\$GS_RUN\" $bad" >/dev/null 2>&1
	rc=$?
	check "gpusched-run $bad: refused with status 125 (got $rc)" [ $rc = 125 ]
done
"$GS_RUN" -- /nonexistent/program 2>/dev/null
check "a missing command gives 127" [ $? = 127 ]

out=$(LD_PRELOAD=/nonexistent.so "$GS_RUN" --weight 50 --class batch --cap 80 --label job-7 \
	--mem-limit 20G -- \
	sh -c 'echo "$LD_PRELOAD|$GPUSCHED_WEIGHT|$GPUSCHED_CLASS|$GPUSCHED_CAP|$GPUSCHED_LABEL|$GPUSCHED_MEM_LIMIT"' 2>/dev/null)
check "settings reach the program, the library first in LD_PRELOAD ($out)" \
	[ "$out" = "$GS_LIB:/nonexistent.so|50|batch|80|job-7|20G" ]

"$GS_RUN" --weight 50 --label job-7 -- "$GS_CLIENT" --seconds 0.3 >"$T/c.out" 2>"$T/c.err"
check "a client under gpusched-run is scheduled" \
	sh -c "grep -q 'gated=[1-9]' '$T/c.err' && grep -q 'label=job-7' '$T/c.err'"
show c
done_testing
