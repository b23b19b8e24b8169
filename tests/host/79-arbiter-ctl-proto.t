#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The arbiter's control protocol (daemon/gpusched_ctl.h) on the wire:
# malformed messages get clean errors (EPROTO, EMSGSIZE, EOPNOTSUPP,
# EINVAL, ERANGE, ENODEV, ESRCH, EISCONN, EPERM) and the arbiter keeps
# serving; a list of 1,500 clients, read slowly so that the arbiter must
# wait for room and resume, is complete, without duplicates, in several
# messages of which only the last says DONE; gpuschedctl lists them all.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

service 10000 500000

# The protocol in Python, from the header's layout; ATTACH from arbwire.py.
cp "$(dirname "$0")/arbwire.py" "$T/"
cat >"$T/ctl.py" <<'PY'
import errno, os, socket, struct, sys
from arbwire import attach_on, conn

MAGIC, VERSION = 0x47504343, 3
GET_GPUS, GET_CLIENTS, SET_GPU, SET_CLIENT, SUBSCRIBE, EV_ATTACH = 1, 2, 3, 4, 5, 6
F_MULTI, F_DONE = 1, 2
HDR = struct.Struct("<IHHIIiHH")            # struct gpusched_ctl_hdr, 24 bytes
CLIENT = struct.Struct("<QII16sIIQIIII6Q4Q2Q")  # struct gpusched_ctl_client, 160
SET_GPU_S = struct.Struct("<II10I2Q")        # 64
SET_CLIENT_S = struct.Struct("<QIIII4I2Q")   # 56: params end mem_limit, reserved
FILTER = struct.Struct("<IIQ")               # 16
assert HDR.size == 24 and CLIENT.size == 160 and SET_GPU_S.size == 64
assert SET_CLIENT_S.size == 56

def msg(cmd, recs=b"", seq=1, rec_size=None, nr=None, version=VERSION, flags=0,
        error=0, magic=MAGIC):
    if rec_size is None:
        rec_size = len(recs)
    if nr is None:
        nr = 1 if recs else 0
    return HDR.pack(magic, version, cmd, seq, flags, error, rec_size, nr) + recs

def reply(s):
    """Messages up to DONE: (header fields, [records])."""
    out = []
    while True:
        m = s.recv(65536)
        h = HDR.unpack_from(m)
        assert h[0] == MAGIC, "magic %x" % h[0]
        assert len(m) == HDR.size + h[6] * h[7], "length"
        out.append((h, [m[HDR.size + i * h[6]:HDR.size + (i + 1) * h[6]]
                        for i in range(h[7])]))
        if h[4] & F_DONE:
            return out

def error_of(s, data):
    s.send(data)
    r = reply(s)
    assert len(r) == 1
    return -r[0][0][5]

def set_client(id=0, pid=0, gpu=0, flags=0, reserved=0, mask=1, weight=100,
               cls=1, cap=0, pres=(0, 0)):
    return SET_CLIENT_S.pack(id, pid, gpu, flags, reserved, mask, weight, cls,
                             cap, *pres)

def set_gpu(index=0, mask=1, vals=(10000, 500000, 500, 1000000, 100000, 50, 200, 100, 0, 0),
            res=(0, 0)):
    return SET_GPU_S.pack(index, mask, *vals, *res)
PY

# Each case: a description, the errno expected, and the message (Python).
cat >"$T/badmsg.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from ctl import *
E = errno
cases = [
    ("a header cut short", E.EPROTO, struct.pack("<IH", MAGIC, 1)),
    ("a wrong version", E.EPROTO, msg(GET_GPUS, version=VERSION + 1)),
    ("records that are not there", E.EPROTO, msg(GET_GPUS, rec_size=128, nr=3)),
    ("bytes beyond the records", E.EPROTO, msg(GET_GPUS) + b"xx"),
    ("a message longer than any", E.EPROTO, msg(GET_GPUS) + b"\0" * 20000),
    ("an unknown command", E.EOPNOTSUPP, msg(99)),
    ("an event sent as a request", E.EOPNOTSUPP, msg(EV_ATTACH)),
    ("request flags set", E.EINVAL, msg(GET_GPUS, flags=1)),
    ("a request error field set", E.EINVAL, msg(GET_GPUS, error=-1)),
    ("an argument to GET_GPUS", E.EINVAL, msg(GET_GPUS, FILTER.pack(0, 0, 0))),
    ("a filter of the wrong size", E.EMSGSIZE, msg(GET_CLIENTS, b"\0" * 8)),
    ("two filters", E.EINVAL, msg(GET_CLIENTS, FILTER.pack(0, 0, 0) * 2,
                                  rec_size=16, nr=2)),
    ("unknown filter flags", E.EOPNOTSUPP, msg(GET_CLIENTS, FILTER.pack(2, 0, 0))),
    ("a filter's reserved field", E.EINVAL, msg(GET_CLIENTS, FILTER.pack(0, 0, 1))),
    ("SET_CLIENT without an argument", E.EINVAL, msg(SET_CLIENT)),
    ("SET_CLIENT of the wrong size", E.EMSGSIZE, msg(SET_CLIENT, set_client(pid=1)[:48])),
    ("SET_CLIENT: unknown mask bits", E.EOPNOTSUPP, msg(SET_CLIENT, set_client(pid=1, mask=16))),
    ("SET_CLIENT: unknown flags", E.EOPNOTSUPP, msg(SET_CLIENT, set_client(pid=1, flags=4))),
    ("SET_CLIENT: reserved field", E.EINVAL, msg(SET_CLIENT, set_client(pid=1, reserved=1))),
    ("SET_CLIENT: params reserved", E.EINVAL, msg(SET_CLIENT, set_client(pid=1, pres=(0, 1)))),
    ("SET_CLIENT: nothing to set", E.EINVAL, msg(SET_CLIENT, set_client(pid=1, mask=0))),
    ("SET_CLIENT: neither id nor pid", E.EINVAL, msg(SET_CLIENT, set_client())),
    ("SET_CLIENT: weight 0", E.ERANGE, msg(SET_CLIENT, set_client(pid=1, weight=0))),
    ("SET_CLIENT: weight 10001", E.ERANGE, msg(SET_CLIENT, set_client(pid=1, weight=10001))),
    ("SET_CLIENT: class 3", E.ERANGE, msg(SET_CLIENT, set_client(pid=1, mask=2, cls=3))),
    ("SET_CLIENT: cap 101", E.ERANGE, msg(SET_CLIENT, set_client(pid=1, mask=4, cap=101))),
    ("SET_CLIENT: no such pid", E.ESRCH, msg(SET_CLIENT, set_client(pid=999999))),
    ("SET_CLIENT: no such id", E.ESRCH, msg(SET_CLIENT, set_client(id=123456789))),
    ("SET_GPU: unknown knob bits", E.EOPNOTSUPP, msg(SET_GPU, set_gpu(mask=1024))),
    ("SET_GPU: reserved field", E.EINVAL, msg(SET_GPU, set_gpu(res=(1, 0)))),
    ("SET_GPU: timeslice 99 us", E.ERANGE, msg(SET_GPU, set_gpu(vals=(99, 0, 0, 0, 0, 0, 0, 0, 0, 0)))),
    ("SET_GPU: latency 91%", E.ERANGE, msg(SET_GPU, set_gpu(mask=32, vals=(0, 0, 0, 0, 0, 91, 0, 0, 0, 0)))),
    ("SET_GPU: mem_default_pct 101", E.ERANGE, msg(SET_GPU, set_gpu(mask=256, vals=(0, 0, 0, 0, 0, 0, 0, 0, 101, 0)))),
    ("SET_GPU: no such GPU", E.ENODEV, msg(SET_GPU, set_gpu(index=7))),
    ("SUBSCRIBE with an argument", E.EINVAL, msg(SUBSCRIBE, b"\0" * 8)),
]
s = conn(sys.argv[1])
fails = 0
for seq, (what, want, data) in enumerate(cases, 1):
    if len(data) >= HDR.size:    # number the request, to see it echoed
        data = data[:8] + struct.pack("<I", seq) + data[12:]
    s.send(data)
    r = reply(s)
    got = -r[0][0][5]
    echoed = len(data) < HDR.size or r[0][0][3] == seq
    ok = len(r) == 1 and got == want and echoed
    fails += not ok
    print("%s %s: %s (%s)" % ("ok" if ok else "FAIL", what, errno.errorcode.get(got, got),
                              "expected " + errno.errorcode[want]))
# The connection still works after all of that.
s.send(msg(GET_GPUS, seq=1000))
r = reply(s)
print("%s the same connection lists GPUs afterwards" % ("ok" if r[-1][0][5] == 0 else "FAIL"))
sys.exit(1 if fails or r[-1][0][5] else 0)
PY

python3 "$T/badmsg.py" "$GPUSCHED_ARBITER" "$T" >"$T/badmsg.out" 2>&1
rc=$?
diag "$T/badmsg.out"
check "35 malformed requests, each with its errno, on one connection" test $rc = 0
check "(every case ran)" test "$(grep -c '^ok ' "$T/badmsg.out")" = 36
check "the arbiter is still running" kill -0 "$ARB_PID"

# Roles and authority.
python3 - "$GPUSCHED_ARBITER" "$T" >"$T/roles.out" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from ctl import *
s = conn(sys.argv[1])
print("attach", attach_on(s, b"role-test-gpu-01"))
print("control on a client", error_of(s, msg(GET_GPUS)))
c = conn(sys.argv[1])
print("control", error_of(c, msg(GET_GPUS)))
print("attach on a control connection", attach_on(c, b"role-test-gpu-01"))
PY
diag "$T/roles.out"
check "a control request on a client's connection: EISCONN" \
	grep -q "^control on a client $(python3 -c 'import errno; print(errno.EISCONN)')$" "$T/roles.out"
check "ATTACH on a control connection: EISCONN" \
	grep -q "^attach on a control connection -$(python3 -c 'import errno; print(errno.EISCONN)')$" "$T/roles.out"

# An interpreter nobody may run (not one under root's home).
py_nobody=$(command -v /usr/bin/python3 || command -v python3)
setpriv --reuid=nobody --regid=nogroup --clear-groups "$py_nobody" - "$GPUSCHED_ARBITER" "$T" \
	>"$T/perm.out" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from ctl import *
s = conn(sys.argv[1])
for what, data in [("SET_GPU", msg(SET_GPU, set_gpu())),
                   ("SET_CLIENT", msg(SET_CLIENT, set_client(pid=1, weight=1))),
                   ("SUBSCRIBE", msg(SUBSCRIBE)),
                   ("GET_GPUS", msg(GET_GPUS))]:
    print(what, errno.errorcode.get(error_of(s, data), "0"))
PY
diag "$T/perm.out"
check "nobody: SET_GPU, SET_CLIENT, SUBSCRIBE are EPERM; GET_GPUS works" sh -c "
	grep -q '^SET_GPU EPERM$' '$T/perm.out' && grep -q '^SET_CLIENT EPERM$' '$T/perm.out' &&
	grep -q '^SUBSCRIBE EPERM$' '$T/perm.out' && grep -q '^GET_GPUS 0$' '$T/perm.out'"

# Whose pid and command a listing shows: root's client and nobody's on
# one GPU, listed by nobody, by root, and by root without CAP_NET_ADMIN
# and CAP_SYS_PTRACE (security.md, F6). One process holds both clients
# (the arbiter takes the uid from connect()): the listings tell them apart
# by uid, each shown with its pid or 0.
cat >"$T/who.py" <<'PY'
import ctypes, os, sys
sys.path.insert(0, sys.argv[2])
from ctl import *
path, me = sys.argv[1], os.getpid()
held = []
for euid in (None, 65534):
    s = conn(path, euid)
    assert attach_on(s, b"who-sees-gpu-001") == 0
    held.append(s)

def listing(who, euid=None):
    c = conn(path, euid)
    c.send(msg(GET_CLIENTS))
    for h, recs in reply(c):
        for rec in recs:
            f = CLIENT.unpack(rec)
            pid, comm, uid = f[2], f[3].rstrip(b"\0").decode(), f[4]
            if uid in (0, 65534):
                print(who, "uid", uid, "pid", "mine" if pid == me else pid,
                      "comm", comm or "-")
    c.close()

listing("nobody", 65534)
listing("root")
# Root without capabilities: capset(2) with none effective; the arbiter
# reads them when it accepts the connection.
hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
data = (ctypes.c_uint32 * 6)()
libc = ctypes.CDLL(None, use_errno=True)
if libc.capget(hdr, data) or libc.capset(hdr, (ctypes.c_uint32 * 6)(
        0, data[1], 0, 0, data[4], 0)):
    print("capset failed", ctypes.get_errno())
listing("nocap")
PY
python3 "$T/who.py" "$GPUSCHED_ARBITER" "$T" >"$T/who.out" 2>&1
diag "$T/who.out"
check "nobody sees its own client's pid and command" \
	grep -q '^nobody uid 65534 pid mine comm python3$' "$T/who.out"
check "nobody sees root's client without them" \
	grep -q '^nobody uid 0 pid 0 comm -$' "$T/who.out"
check "root sees nobody's client's pid" \
	grep -q '^root uid 65534 pid mine comm python3$' "$T/who.out"
check "root sees its own" grep -q '^root uid 0 pid mine comm python3$' "$T/who.out"
check "root without the capabilities sees its own client's pid" \
	grep -q '^nocap uid 0 pid mine comm python3$' "$T/who.out"
check "but not nobody's" grep -q '^nocap uid 65534 pid 0 comm -$' "$T/who.out"

# 1,500 clients on one GPU (12 messages: more than the 10 a Unix socket
# queues by default), read slowly: complete, each once, in order.
n=1500
python3 - "$GPUSCHED_ARBITER" "$T" "$n" >"$T/many.out" 2>&1 <<'PY' &
import resource, sys, time
sys.path.insert(0, sys.argv[2])
from ctl import *
n = int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 100), hard))
socks = []
for i in range(n):
    s = conn(sys.argv[1])
    ret = attach_on(s, b"many-clients-gpu")
    assert ret == 0, "attach %d: %d" % (i, ret)
    socks.append(s)
print("attached", len(socks), flush=True)
c = conn(sys.argv[1])
c.send(msg(GET_CLIENTS, seq=7))
time.sleep(1)          # the arbiter's queue to us fills up meanwhile
r = reply(c)
ids = [CLIENT.unpack(rec)[0] for h, recs in r for rec in recs
       if CLIENT.unpack(rec)[2] == os.getpid()]
flags = [h[4] for h, recs in r]
ok = (len(ids) == n and len(set(ids)) == n and ids == sorted(ids)
      and all(f == F_MULTI for f in flags[:-1]) and flags[-1] & F_DONE
      and all(h[3] == 7 for h, recs in r))
print("listed %d of %d, %d distinct, in %d messages, flags %s: %s" %
      (len(ids), n, len(set(ids)), len(r), sorted(set(flags)), "ok" if ok else "FAIL"),
      flush=True)
open(sys.argv[2] + "/many.ready", "w").close()
time.sleep(30)         # until the test has listed them with gpuschedctl
PY
echo $! >"$T/many.pid"
i=0
while [ ! -e "$T/many.ready" ] && kill -0 "$(cat "$T/many.pid")" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
diag "$T/many.out"
check "the raw list of $n clients is complete, in order, in several messages" \
	grep -q "^listed $n of $n, $n distinct, in .*: ok$" "$T/many.out"
"$CTL" --json clients -i 0 >"$T/many.json" 2>"$T/many.err"
check "gpuschedctl --json clients lists all $n (and parses)" python3 - "$T/many.json" "$(cat "$T/many.pid")" "$n" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clients"]
mine = [x["id"] for x in c if x["pid"] == int(sys.argv[2])]
print("# gpuschedctl listed %d of the helper's clients, %d distinct" % (len(mine), len(set(mine))))
sys.exit(len(mine) != int(sys.argv[3]) or len(set(mine)) != len(mine))
PY
"$CTL" status >"$T/many-status.out" 2>&1
check "status counts them" grep -q "clients $n," "$T/many-status.out"
kill "$(cat "$T/many.pid")" 2>/dev/null
wait_bg many 2>/dev/null	# killed: no "Terminated" on stderr
sleep 0.3
"$CTL" status >"$T/after-status.out" 2>&1
check "they are gone when the helper exits" grep -q "clients 0," "$T/after-status.out"
check "the arbiter is still running" kill -0 "$ARB_PID"
done_testing
