#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The arbiter out of descriptors: more connections than its limit allows
# must not make it spin or flood its log (the listening socket stays
# readable while accept() fails with EMFILE), and once clients leave it
# serves again. Before the fix: 100% CPU and ~70,000 log lines a second.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }

log=$T/fds.log
# Soft and hard limit: the arbiter raises its soft limit to the hard one.
AS_NOFILE=40 arbiter_start "$log" || bail "arbiter did not start: $(cat "$log")"

# 60 connections held for 3 s, then closed one by one: about 30 beyond
# the limit, queued.
python3 - "$GPUSCHED_ARBITER" >"$T/conn.out" 2>&1 <<'PY' &
import socket, sys, time
socks = []
for i in range(60):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(2)
    try:
        s.connect(sys.argv[1])
        socks.append(s)
    except OSError as e:
        print("connect", i, e)
print("connected", len(socks))
time.sleep(3)
# One by one: each that leaves lets a queued one in, and the next accept
# fails again; that must not be said again each time.
for s in socks:
    s.close()
    time.sleep(0.02)
PY
conn=$!
sleep 0.5
c0=$(arb_ticks)
sleep 2
c1=$(arb_ticks)
wait $conn
used=$(ticks_s "$c0" "$c1")
lines=$(grep -c 'accept' "$log")
check "out of descriptors, the arbiter idles ($used s of CPU in 2 s)" \
	below "$used" 0.5
check "and says so once ($lines log lines about accept)" [ "$lines" -le 3 ]
check "the connections beyond the limit waited in the queue" grep -q 'connected 60' "$T/conn.out"

# Everybody left: a client is served again.
run_fg() { "$@" >"$T/after.out" 2>"$T/after.err"; }
check "after they leave, a client takes the token" \
	run_fg client "$GS_CLIENT" --seconds 0.2 --kernel-us 100
check "the client really ran scheduled" sh -c "grep -q ' acquires=[1-9]' '$T/after.err'"
check "the arbiter is still running" kill -0 "$ARB_PID"
diag "$log"
done_testing
