#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tokens of made-up UUIDs cannot keep GPUs out of the arbiter (issue 21,
# bug 2): once --max-gpus tokens exist, a new UUID takes the place of one
# with no client and no knob that gpuschedctl set; with every token in use
# it gets ENOSPC. Before the fix: ENOSPC until the arbiter restarted.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

GS_ARB_ARGS="--max-gpus 2" service 10000 500000

# ATTACH on the wire (arbwire.py): one client of made-up UUID N per word,
# kept until all are tried; prints their errnos (0: attached).
attach() { python3 "$(dirname "$0")/arbwire.py" "$GPUSCHED_ARBITER" gsARBTOK "$@"; }
gpus() { "$CTL" --socket "$GPUSCHED_ARBITER" --json status |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["gpus"]))'; }

# Two UUIDs attach and leave: two tokens, no client.
r=$(attach 1 2)
check "two made-up UUIDs attach and leave ($r)" [ "$r" = "0 0" ]
check "two tokens exist" [ "$(gpus)" = 2 ]
# A third and a fourth, held: each takes an unused token's place.
r=$(attach 3 4 5)
check "new UUIDs take unused tokens' places; with both in use, ENOSPC ($r)" \
	[ "$r" = "0 0 28" ]
check "still two tokens" [ "$(gpus)" = 2 ]
# A knob set by gpuschedctl keeps a token without clients.
"$CTL" --socket "$GPUSCHED_ARBITER" set gpu 0 timeslice_us=5000 >/dev/null 2>&1
r=$(attach 6 7)
check "a token whose knob an admin set is kept: one place, then ENOSPC ($r)" \
	[ "$r" = "0 28" ]
check "and its knob too" sh -c "'$CTL' --socket '$GPUSCHED_ARBITER' status | grep -q 'timeslice_us=5000'"
check "the arbiter is still running" kill -0 "$ARB_PID"
done_testing
