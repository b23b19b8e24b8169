#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Corners of the arbiter's wire. An empty message is a request of the
# wrong size: EPROTO, and the connection stays (before the fix recvmsg()'s
# 0 was taken for the end of the connection, which was closed). An
# ACQUIRE with a timeout past the clock's end waits as the module's does
# (before the fix now + timeout_ns wrapped, and it got ETIMEDOUT at once);
# a short timeout still times out. An ATTACH whose connecting process has
# gone, sent by a child that kept the connection, is refused (ESRCH):
# before the fix it was taken, and the rules judged whatever process had
# that pid by then.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }

# A slice and grace longer than the test: the holder keeps the token.
service 5000000 5000000

cat >"$T/wire.py" <<'PY'
import os, select, sys, time
sys.path.insert(0, os.environ["ARBWIRE_DIR"])
from arbwire import *

path = os.environ["GPUSCHED_ARBITER"]
uuid = b"gsWIRE00" + (1).to_bytes(8, "little")
out = {}

def answered(s, wait):
    return bool(select.select([s], [], [], wait)[0])

def timeouts():
    h, out["holder_attach"] = attach(path, uuid)
    request(h, ACQUIRE_IOC, acquire_arg())
    out["holder"] = answer(h)
    w, out["waiter_attach"] = attach(path, uuid)
    for name, ns in (("max", 2**64 - 1), ("2^63", 2**63)):
        request(w, ACQUIRE_IOC, acquire_arg(ns, ACQUIRE_TIMEOUT))
        out["waits_" + name] = int(not answered(w, 0.5))
        request(h, RELEASE_IOC)
        out["release_" + name] = answer(h)
        out["granted_" + name] = answer(w)
        h, w = w, h  # the new holder
    t0 = time.monotonic()
    request(w, ACQUIRE_IOC, acquire_arg(100 * 10**6, ACQUIRE_TIMEOUT))
    out["short"] = answer(w)
    out["short_ms"] = int((time.monotonic() - t0) * 1000)

def empty():
    s = conn(path)
    s.send(b"")
    out["empty"] = answer(s)
    request(s, GET_INFO_IOC)
    out["after"] = answer(s)
    c, out["client_attach"] = attach(path, uuid)
    c.send(b"")
    out["empty_client"] = answer(c)
    request(c, GET_INFO_IOC)
    out["client_after"] = answer(c)

def orphan():
    # A connection whose process has gone (reaped: /proc has no such pid),
    # kept by its child: ATTACH is refused. The child's own is not.
    r, w = os.pipe()
    c1 = os.fork()
    if c1 == 0:
        os.close(r)
        s = conn(path)
        request(s, GET_INFO_IOC)  # answered: accepted while we live
        answer(s)
        parent = os.getpid()
        if os.fork() == 0:
            end = time.monotonic() + 5
            while time.monotonic() < end:
                try:
                    os.kill(parent, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.01)
            try:
                res = [attach_on(s, uuid)]
                res.append(attach_on(conn(path), uuid))
                os.write(w, ("%d %d" % tuple(res)).encode())
            except Exception as e:  # told as the part's error
                os.write(w, type(e).__name__.encode())
            os._exit(0)
        os._exit(0)
    os.close(w)
    os.waitpid(c1, 0)
    res = os.read(r, 64).decode().split()
    if len(res) != 2:
        raise RuntimeError("the child: %s" % res)
    out["orphan_attach"], out["own_attach"] = res

for part in (timeouts, empty, orphan):
    try:
        part()
    except Exception as e:  # a connection closed: how far it got
        out[part.__name__ + "_error"] = "%s(%s)" % (type(e).__name__, e)
print(" ".join("%s=%s" % kv for kv in out.items()))
PY
ARBWIRE_DIR=$(dirname "$0") python3 "$T/wire.py" >"$T/wire.out" 2>"$T/wire.err"
r=$(cat "$T/wire.out")
# has KEY=VALUE...: each is in the output.
has() { has_kv "$T/wire.out" "$@"; }
short_ms=$(value short_ms "$T/wire.out")
check "an ACQUIRE timing out past the clock's end (2^64 - 1 ns) waits ($r)" \
	has holder=0 waiter_attach=0 waits_max=1
check "and is granted when the holder releases" has release_max=0 granted_max=0
check "so does one of 2^63 ns" has waits_2^63=1 release_2^63=0 granted_2^63=0
check "a timeout of 100 ms still times out ($short_ms ms)" has short=-110
check "not at once" [ "${short_ms:-0}" -ge 90 ]
check "an empty message gets EPROTO" has empty=-71
check "and the connection stays" has after=0
check "on a client's connection too" has client_attach=0 empty_client=-71 client_after=0
check "an ATTACH whose connecting process has gone gets ESRCH" has orphan_attach=-3
check "one from the process that connected is taken" has own_attach=0
check "the arbiter is still running" kill -0 "$ARB_PID"
# Made 0666 by bind() itself: no chmod() after it, which would follow a
# link swapped in for the socket.
check "its socket is a socket of mode 666" [ "$(stat -c '%F %a' "$GPUSCHED_ARBITER")" = "socket 666" ]
[ "$t_failed" = 0 ] || { diag "$T/wire.err"; diag "$T/arbiter.log"; }
done_testing
