#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mem_admission (gpusched.conf(5)) in gpuschedd --arbiter: a client whose
# memory limit would push the sum of limits on its GPU past the GPU's
# memory less the reserve is refused (a limit of 1 byte) or made batch
# class, as the policy says; the others are admitted; a reload keeps the
# decision. gs-mem-test's clients report 8 GiB; the reserve is 1 GiB, so
# 7 GiB of limits fit.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
MEMT=$(find_file "$t_root/build/tests/host/gs-mem-test") || bail "gs-mem-test not built"
[ -n "$GS_CTL" ] || bail "gpuschedctl not built"

policy() {	# policy ACTION: the policy file, with mem_admission = ACTION
	cat >"$T/policy.conf" <<EOF_CONF
[gpu]
mem_reserve_mb = 1024
mem_admission = $1
[rule big]
label = big
mem_limit = 3G
[rule small]
label = small
mem_limit = 1G
EOF_CONF
	chmod 0644 "$T/policy.conf"
}
policy refuse
log=$T/arbiter.log
GS_ARB_ARGS="--verbose --config $T/policy.conf"
service 20000 100000

# hold NAME LABEL BYTES: a client that reserves BYTES and stays until
# $T/NAME.in is closed (fd 3 for a, 4 for b, 5 for e).
hold() {
	mkfifo "$T/$1.in"
	# Not holding the others' fifos open: each ends when its own closes.
	GPUSCHED_LABEL=$2 "$MEMT" "$GPUSCHED_ARBITER" hold "$3" <"$T/$1.in" >"$T/$1.out" 2>&1 \
		3>&- 4>&- 5>&- &
	echo $! >"$T/$1.pid"
}
held() {
	i=0
	while ! grep -q held "$T/$1.out" && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep -q held "$T/$1.out"
}
# limit PID: the client's mem_limit and class, as gpuschedctl lists them.
limit() {
	"$GS_CTL" --json clients -i 0 | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["clients"] if c["pid"] == int(sys.argv[1])]
print(c[0]["mem_limit"], c[0]["class"]) if c else print("none")' "$1"
}

hold a big 1G
exec 3>"$T/a.in"
check "a first client of 3 GiB is admitted" held a
hold b big 1G
exec 4>"$T/b.in"
check "a second one too: 6 GiB of 7" held b
check "... with its rule's 3 GiB" \
	sh -c "[ \"\$1\" = '3221225472 normal' ]" - "$(limit "$(cat "$T/b.pid")")"

GPUSCHED_LABEL=big "$MEMT" "$GPUSCHED_ARBITER" info >"$T/c.out" 2>&1
check "a third is refused: a limit of 1 byte" grep -qx 'limit 1 class 1' "$T/c.out"
check "the log says why" grep -q 'a limit of 3G beside 6G of others.* would pass the 7G .*: refused' "$log"
GPUSCHED_LABEL=small "$MEMT" "$GPUSCHED_ARBITER" info >"$T/d.out" 2>&1
check "one of 1 GiB fits exactly, and is admitted" grep -qx 'limit 1073741824 class 1' "$T/d.out"

# A refused client stays refused across a reload, whatever its rule says.
hold e big 1
exec 5>"$T/e.in"
check "a refused client can hold its 1 byte" held e
e=$(cat "$T/e.pid")
policy batch
kill -HUP "$ARB_PID"
i=0
while ! grep -q 'reloaded' "$log" && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "the policy is reloaded" grep -q reloaded "$log"
check "after the reload the refused client is still refused" \
	sh -c "[ \"\$1\" = '1 normal' ]" - "$(limit "$e")"

# mem_admission = batch: the limit stays, the class is batch.
GPUSCHED_LABEL=big "$MEMT" "$GPUSCHED_ARBITER" info >"$T/f.out" 2>&1
check "with batch: a third of 3 GiB is made batch class" \
	grep -qx 'limit 3221225472 class 2' "$T/f.out"
check "the log says so" grep -q 'made batch class' "$log"

# Clients that leave free their part.
exec 3>&- 4>&-
wait "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
GPUSCHED_LABEL=big "$MEMT" "$GPUSCHED_ARBITER" info >"$T/g.out" 2>&1
check "once they left, one of 3 GiB is admitted again" \
	grep -qx 'limit 3221225472 class 1' "$T/g.out"
exec 5>&-
wait "$e"
done_testing
