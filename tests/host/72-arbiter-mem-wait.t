#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Under the arbiter, an allocation never waits behind a token wait of
# another thread of its process: libgpusched sends memory calls on the
# client's memory channel (include/gpusched/arbiter_wire.h), which the
# arbiter answers while the client's ACQUIRE is parked. One thread of a
# process launches while another process holds the token; its other thread
# allocates. The proof is the arbiter's own count: the allocation came back
# while the client was still waiting, with no grant yet.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
[ -n "$GS_CTL" ] || bail "gpuschedctl not built"
MEMT=$(find_file "$t_root/build/tests/host/gs-mem-test") || bail "gs-mem-test not built"

# The longest slice and grace: the holder keeps the token through the test
# (a revoke, at least 20 s after its grant, would show as a grant below).
service 10000000 10000000

# The holder says "holding" on a pipe, once it holds: read, not polled.
mkfifo "$T/hold.in" "$T/hold.out"
"$MEMT" "$GPUSCHED_ARBITER" token <"$T/hold.in" >"$T/hold.out" 2>&1 &
echo $! >"$T/hold.pid"
exec 9>"$T/hold.in"
read -r said <"$T/hold.out"
check "another process holds the token" test "$said" = holding

# state PID: the client's state and counters, as the arbiter reports them.
state() {
	"$GS_CTL" --json clients -i 0 | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["clients"] if c["pid"] == int(sys.argv[1])]
if c:
    print(c[0]["state"], c[0]["grants"], c[0]["mem_reserved"])' "$1"
}

# Not holding the holder's stdin open (9>&-): its end releases the token.
env LD_PRELOAD="$GS_LIB" "$GS_MEM" launch 1000 wait "$T/go" alloc 1M \
	touch "$T/allocated" wait "$T/end" >"$T/mem.out" 2>"$T/mem.err" 9>&- &
echo $! >"$T/mem.pid"
mem=$(cat "$T/mem.pid")
i=0
while [ "$(state "$mem" | cut -d' ' -f1)" != waiting ] && [ $i -lt 400 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "one thread's launch waits for the token" \
	sh -c "[ \"\$1\" = 'waiting 0 0' ]" - "$(state "$mem")"

touch "$T/go"
# Without the channel the allocation would wait for the token: for the
# holder's revoke, or for ever. Bounded here only so that a failure ends.
i=0
while [ ! -e "$T/allocated" ] && kill -0 "$mem" 2>/dev/null && [ $i -lt 1200 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "the other thread's allocation returned" grep -qx 'op=alloc size=1048576 r=0' "$T/mem.out"
check "... while the client still waited, never granted, 1 MiB reserved" \
	sh -c "[ \"\$1\" = 'waiting 0 1048576' ]" - "$(state "$mem")"
check "... and the launch had not returned" sh -c "! grep -q op=launch '$T/mem.out'"

exec 9>&-	# the holder leaves: the token is the waiter's
touch "$T/end"
wait_bg mem
check "the client ran to its end" test $? -eq 0
check "the launch returned once the holder left" grep -qx 'op=launch r=0' "$T/mem.out"
show mem
done_testing
