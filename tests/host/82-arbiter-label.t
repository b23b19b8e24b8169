#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A rule on labels, and an environment that does not answer. The label is
# in the client's environment, its own memory: a process can make reading
# it block for as long as it likes (a FUSE file mapped over it). Here a
# preload makes every open of /proc/PID/environ in the arbiter wait while
# a file exists. The arbiter used to read it in its event loop, and served
# nobody until the read ended; now a thread of its own reads it: the
# ATTACH is answered after 50 ms without the label, others at once, and
# the rule applies when the label comes. Without the stall, the rule has
# applied by the time ATTACH is answered.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
shim=$(find_file "$t_root/build/tests/host/libgs-stall-environ.so") ||
	bail "libgs-stall-environ.so not built"

cat >"$T/policy.conf" <<'CONF'
[rule slow]
label = slow
weight = 7
CONF
flag=$T/stall
: >"$flag"
# Whatever happens, the stall ends within 8 s.
(sleep 8; rm -f "$flag") >/dev/null 2>&1 &
GS_STALL_ENVIRON=$flag LD_PRELOAD=$shim arbiter_start "$T/arbiter.log" \
	--config "$T/policy.conf" || bail "arbiter did not start: $(cat "$T/arbiter.log")"

cat >"$T/label.py" <<'PY'
import os, struct, sys, time
sys.path.insert(0, os.environ["ARBWIRE_DIR"])
from arbwire import *

path, flag = os.environ["GPUSCHED_ARBITER"], sys.argv[1]
out = {}

def weight(s):
    """The client's weight, from GET_INFO (struct gpusched_client_info)."""
    request(s, GET_INFO_IOC)
    data = s.recv(8 + WIRE_MAX)
    magic, ret = struct.unpack_from("<Ii", data)
    return struct.unpack_from("<I", data, 8 + 24)[0] if ret == 0 else ret

def ms(t0):
    return int((time.monotonic() - t0) * 1000)

try:
    # The label's read stalls.
    t0 = time.monotonic()
    a, out["stalled_attach"] = attach(path, b"gsLABEL0" + (1).to_bytes(8, "little"))
    out["stalled_ms"] = ms(t0)
    out["seen"] = int(os.path.exists(flag + ".seen"))
    out["weight_before"] = weight(a)
    t0 = time.monotonic()
    c = conn(path)
    request(c, GET_INFO_IOC)
    out["other"] = answer(c)
    out["other_ms"] = ms(t0)
    # It ends: the rule applies.
    os.unlink(flag)
    end = time.monotonic() + 2
    while weight(a) != 7 and time.monotonic() < end:
        time.sleep(0.02)
    out["weight_late"] = weight(a)
    # No stall: applied by the time ATTACH is answered.
    t0 = time.monotonic()
    b, out["plain_attach"] = attach(path, b"gsLABEL0" + (2).to_bytes(8, "little"))
    out["plain_ms"] = ms(t0)
    out["weight_plain"] = weight(b)
except Exception as e:  # how far it got
    out["error"] = "%s(%s)" % (type(e).__name__, e)
print(" ".join("%s=%s" % kv for kv in out.items()))
PY
GPUSCHED_LABEL=slow ARBWIRE_DIR=$(dirname "$0") python3 "$T/label.py" "$flag" \
	>"$T/label.out" 2>"$T/label.err"
r=$(cat "$T/label.out")
has() { has_kv "$T/label.out" "$@"; }
stalled_ms=$(value stalled_ms "$T/label.out")
other_ms=$(value other_ms "$T/label.out")
plain_ms=$(value plain_ms "$T/label.out")
check "a client whose label's read stalls is attached ($r)" has stalled_attach=0
check "the arbiter did read its environment: the case is real" has seen=1
check "after 50 ms, not at the stall's end ($stalled_ms ms)" below "${stalled_ms:-99999}" 1000
check "not before 50 ms" [ "${stalled_ms:-0}" -ge 50 ]
check "without the label: no rule" has weight_before=100
check "meanwhile another connection is answered" has other=0
check "at once ($other_ms ms)" below "${other_ms:-99999}" 1000
check "the rule applies once the label is read" has weight_late=7
check "without a stall, a client is attached" has plain_attach=0
check "with the rule applied by then" has weight_plain=7
check "in a moment ($plain_ms ms)" below "${plain_ms:-99999}" 1000
check "the arbiter is still running" kill -0 "$ARB_PID"
[ "$t_failed" = 0 ] || { diag "$T/label.err"; diag "$T/arbiter.log"; }
done_testing
