#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Descriptors sent to the arbiter. The last close of some files waits as
# long as their maker chooses: here a TCP socket with SO_LINGER (60 s)
# and a send queue its peer never reads. A client sends one and closes its
# own copy, in a request (the arbiter used to read it and close the
# descriptor, and stopped answering everyone for 60 s) or behind a parked
# ACQUIRE, then hangs up (closing the connection drops the message). The
# arbiter must answer another client at once, and hold no descriptor more
# once the close ends. Run on this kernel (where SO_PASSRIGHTS, Linux
# 6.16, refuses the descriptor at sendmsg()) and as on a kernel without it.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
shim=$(find_file "$t_root/build/tests/host/libgs-nopassrights.so") ||
	bail "libgs-nopassrights.so not built"

cat >"$T/passfd.py" <<'PY'
import array, os, socket, struct, sys, time
sys.path.insert(0, os.environ["ARBWIRE_DIR"])
from arbwire import *

path, pid = os.environ["GPUSCHED_ARBITER"], sys.argv[1]
uuid = b"gsPASSFD" + (1).to_bytes(8, "little")
out = {}

def nfds():
    return len(os.listdir("/proc/%s/fd" % pid))

def lingering():
    """A TCP socket whose close blocks for 60 s, and its peer."""
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    s.connect(lst.getsockname())
    peer, _ = lst.accept()
    lst.close()
    s.setblocking(False)
    # Full until the peer's window is shut: data left unsent, which the
    # close waits for (a send queue emptied by late acks would not be).
    full = 0
    while full < 3:
        try:
            s.send(b"x" * 65536)
            full = 0
        except BlockingIOError:
            full += 1
            time.sleep(0.02)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 60))
    return s, peer

def send_fd(c, s, name):
    """A request on c that carries socket s, then closed here: 0 sent,
    else the negative errno (then closed at once: the close is ours)."""
    msg = struct.pack("<II", WIRE_MAGIC, GET_INFO_IOC).ljust(8 + WIRE_MAX, b"\0")
    try:
        c.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                           array.array("i", [s.fileno()]))])
        out[name + "_sent"] = 0
    except OSError as e:
        out[name + "_sent"] = -e.errno
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 0, 0))
    s.close()

def others(name):
    """How long another client waits for an answer, in ms."""
    t0 = time.monotonic()
    c = conn(path)
    request(c, GET_INFO_IOC)
    try:
        out[name + "_answer"] = answer(c)
    except OSError as e:
        out[name + "_answer"] = type(e).__name__
    out[name + "_ms"] = int((time.monotonic() - t0) * 1000)
    c.close()

def waits(name):
    """Where the arbiter's threads wait, once one waits in the socket's
    close (within a second): which, as 1, else the places seen."""
    end = time.monotonic() + 1
    while True:
        seen = set()
        for t in os.listdir("/proc/%s/task" % pid):
            with open("/proc/%s/task/%s/wchan" % (pid, t)) as f:
                seen.add(f.read().strip() or "0")
        if seen & {"sk_stream_wait_close", "wait_woken"} or time.monotonic() > end:
            break
        time.sleep(0.01)
    out[name + "_lingers"] = (1 if seen & {"sk_stream_wait_close", "wait_woken"}
                              else ",".join(sorted(seen)))

def fds_back(name, n0, peer):
    """The peer resets the lingering socket: the close ends, and the
    arbiter's descriptors are back to n0 within 5 s."""
    if out[name + "_sent"] == 0:
        waits(name)
    peer.close()
    end = time.monotonic() + 5
    while nfds() > n0 and time.monotonic() < end:
        time.sleep(0.02)
    out[name + "_fds"] = nfds() - n0

def read():
    # The descriptor in a request the arbiter reads.
    n0 = nfds()
    s, peer = lingering()
    c = conn(path)
    send_fd(c, s, "read")
    if out["read_sent"] == 0:
        # Closed unread: the end, or a reset (a message was left).
        c.settimeout(2)
        try:
            out["read_closed"] = int(c.recv(8 + WIRE_MAX) == b"")
        except ConnectionResetError:
            out["read_closed"] = 1
        except OSError as e:
            out["read_closed"] = type(e).__name__
    others("read")
    c.close()
    fds_back("read", n0, peer)

def queued():
    # The descriptor behind a parked ACQUIRE, unread when the client hangs up.
    n0 = nfds()
    h, out["holder_attach"] = attach(path, uuid)
    request(h, ACQUIRE_IOC, acquire_arg())
    out["holder"] = answer(h)
    w, out["waiter_attach"] = attach(path, uuid)
    request(w, ACQUIRE_IOC, acquire_arg())
    s, peer = lingering()
    send_fd(w, s, "queued")
    w.close()
    time.sleep(0.2)
    others("queued")
    h.close()
    fds_back("queued", n0, peer)

for part in (read, queued):
    try:
        part()
    except Exception as e:  # how far it got
        out[part.__name__ + "_error"] = "%s(%s)" % (type(e).__name__, e)
print(" ".join("%s=%s" % kv for kv in out.items()))
PY

# has KEY=VALUE...: each is in the output.
has() { has_kv "$T/passfd.out" "$@"; }
run_passfd() {
	ARBWIRE_DIR=$(dirname "$0") python3 "$T/passfd.py" "$ARB_PID" \
		>"$T/passfd.out" 2>"$T/passfd.err"
	r=$(cat "$T/passfd.out")
}
# Does this kernel know SO_PASSRIGHTS (83 in asm-generic)?
passrights=$(python3 -c 'import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.setsockopt(socket.SOL_SOCKET, 83, 0)
    print(1)
except OSError:
    print(0)')

# A slice and grace longer than the test: the holder keeps the token.
service 5000000 5000000
run_passfd
if [ "$passrights" = 1 ]; then
	check "with SO_PASSRIGHTS, a request carrying a descriptor is refused ($r)" has read_sent=-1
	check "so is one behind a parked ACQUIRE" has queued_sent=-1
else
	skip "this kernel has no SO_PASSRIGHTS: the case below is the run without it ($r)"
	skip "this kernel has no SO_PASSRIGHTS"
fi
check "another client is answered" has read_answer=0 queued_answer=0
check "within a second, not after the 60 s close (read: $(value read_ms "$T/passfd.out") ms)" \
	below "$(value read_ms "$T/passfd.out")" 1000
check "(queued: $(value queued_ms "$T/passfd.out") ms)" below "$(value queued_ms "$T/passfd.out")" 1000
check "the arbiter holds no descriptor more afterwards" has read_fds=0 queued_fds=0
[ "$t_failed" = 0 ] || { diag "$T/passfd.err"; diag "$T/arbiter.log"; }

# As on a kernel without SO_PASSRIGHTS: the descriptors reach the arbiter.
stop_arbiter
LD_PRELOAD=$shim arbiter_start "$T/arbiter2.log" --timeslice-us 5000000 \
	--grace-us 5000000 || bail "arbiter did not start: $(cat "$T/arbiter2.log")"
run_passfd
check "without SO_PASSRIGHTS, the descriptors are sent ($r)" has read_sent=0 queued_sent=0
check "a request carrying one closes its connection" has read_closed=1
check "its close waits in the arbiter: the case is real" has read_lingers=1 queued_lingers=1
check "another client is answered" has read_answer=0 queued_answer=0 holder=0 waiter_attach=0
check "within a second, not after the 60 s close (read: $(value read_ms "$T/passfd.out") ms)" \
	below "$(value read_ms "$T/passfd.out")" 1000
check "(queued: $(value queued_ms "$T/passfd.out") ms)" below "$(value queued_ms "$T/passfd.out")" 1000
check "the arbiter holds no descriptor more once the closes end" has read_fds=0 queued_fds=0
check "the arbiter is still running" kill -0 "$ARB_PID"
[ "$t_failed" = 0 ] || { diag "$T/passfd.err"; diag "$T/arbiter2.log"; }
done_testing
