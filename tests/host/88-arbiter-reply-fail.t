#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A reply that cannot be sent closes its client, and that close must not
# pull the client out from under whoever is still using it. A parked
# ACQUIRE is answered from inside a policy call (the grant), so a client
# that cannot take replies (its receiving side shut down, or its receive
# buffer full of replies it did not read) was closed while gpuschedctl's
# SET_CLIENT still used it, or while a SIGHUP reload walked the clients.
# An unprivileged client sets it up: it lowers its own cap to 1 %, uses its
# share, parks an ACQUIRE and stops reading. Before the fix the arbiter
# died (SIGSEGV) in each of those three cases. The fourth: a holder leaves
# with such a client next in line, a close that grants inside a close.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root to connect as another user"; exit 0; }
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

# No cap for user nobody (65534): a reload raises the cap its client lowered.
cat >"$T/policy.conf" <<'EOF'
[rule nobody]
user = 65534
cap = none
EOF
args="--config $T/policy.conf --window-us 1000000"
GS_ARB_ARGS=$args service 10000 100000

# victim.py HOW [ARG]: a client of nobody with an ACQUIRE parked that can
# no longer be answered (its receiving side shut down), then HOW: "ctl"
# (gpuschedctl raises its cap), "full" (the same, with its receive buffer
# full of replies it did not read instead), "hup ARBITER_PID" (a reload
# raises it), or "leave" (a root holder leaves and a root waiter is behind
# it). Prints what it saw as key=value.
cat >"$T/victim.py" <<'PY'
import os, select, signal, socket, subprocess, sys, time
sys.path.insert(0, os.environ["ARBWIRE_DIR"])
from arbwire import *

path, how = os.environ["GPUSCHED_ARBITER"], sys.argv[1]
uuid = b"gsREPFAI" + (1).to_bytes(8, "little")
out = {}

def hung_up(s, wait):
    """Has the arbiter closed s, within wait seconds?"""
    p = select.poll()
    p.register(s, select.POLLHUP)
    end = time.time() + wait
    while True:
        if any(ev & select.POLLHUP for _, ev in p.poll(50 if wait else 0)):
            return 1
        if time.time() >= end:
            return 0

def sync():
    """Every request sent so far taken, and the batch it came in ended."""
    s = conn(path)
    for _ in range(2):
        request(s, GET_INFO_IOC)
        answer(s)
    s.close()

def capacity():
    """How many replies the arbiter queues on a connection that reads none."""
    p, n = conn(path), 0
    while True:
        request(p, GET_INFO_IOC)
        sync()
        if hung_up(p, 0):
            return n
        n += 1

def run():
    if how == "leave":
        holder, out["holder_attach"] = attach(path, uuid)
        request(holder, ACQUIRE_IOC, acquire_arg())
        out["holder_acquire"] = answer(holder)
    v, out["attach"] = attach(path, uuid, euid=65534)
    if how != "leave":
        # Its own share, used up: 1 % of a 1 s window is 10 ms.
        request(v, SET_PARAMS_IOC, cap_arg(1))
        out["cap"] = answer(v)
        request(v, ACQUIRE_IOC, acquire_arg())
        out["acquire"] = answer(v)
        time.sleep(0.05)
        request(v, RELEASE_IOC)
        out["release"] = answer(v)
    if how == "full":
        k = capacity()
        for _ in range(k):
            request(v, GET_INFO_IOC)
        request(v, ACQUIRE_IOC, acquire_arg())
        sync()
        out["full"] = int(k > 0 and not hung_up(v, 0))
    else:
        request(v, ACQUIRE_IOC, acquire_arg())
        out["parked"] = int(not select.select([v], [], [], 0.3)[0])
        v.shutdown(socket.SHUT_RD)
    if how in ("ctl", "full"):
        r = subprocess.run([os.environ["CTL"], "--socket", path, "set", "client",
                            str(os.getpid()), "cap=none"], capture_output=True)
        out["ctl"] = r.returncode
    elif how == "hup":
        os.kill(int(sys.argv[2]), signal.SIGHUP)
    else:
        w, out["waiter_attach"] = attach(path, uuid)
        request(w, ACQUIRE_IOC, acquire_arg(3 * 10**9, ACQUIRE_TIMEOUT))
        time.sleep(0.1)
        holder.close()
        out["waiter"] = answer(w)
        request(w, RELEASE_IOC)
        out["waiter_release"] = answer(w)
    out["closed"] = hung_up(v, 2)
    # The token is free again: a client of root takes it.
    n, out["next_attach"] = attach(path, uuid)
    request(n, ACQUIRE_IOC, acquire_arg(2 * 10**9, ACQUIRE_TIMEOUT))
    out["next"] = answer(n)

try:
    run()
except Exception as e:  # the arbiter gone: how far it got
    out["error"] = type(e).__name__
print(" ".join("%s=%s" % kv for kv in out.items()))
PY
victim() {
	ARBWIRE_DIR=$(dirname "$0") CTL=$CTL python3 "$T/victim.py" "$@" \
		>"$T/victim.out" 2>"$T/victim.err"
	cat "$T/victim.out"
}
# has KEY=VALUE...: each is in the last victim's output.
has() { has_kv "$T/victim.out" "$@"; }

r=$(victim ctl)
check "nobody lowers its cap, uses it and parks an ACQUIRE ($r)" \
	has attach=0 cap=0 acquire=0 release=0 parked=1
check "gpuschedctl raises its cap, which grants it: the command succeeds" has ctl=0
check "the arbiter survives the reply that cannot be sent" kill -0 "$ARB_PID"
check "and closes that client" has closed=1
check "whose token goes to the next client" has next_attach=0 next=0

# A fresh arbiter: each case on its own.
GS_ARB_ARGS=$args service 10000 100000
r=$(victim full)
check "again, with replies left unread until no more fit ($r)" \
	has attach=0 cap=0 acquire=0 release=0 full=1 ctl=0
check "the arbiter survives" kill -0 "$ARB_PID"
check "and closes that client" has closed=1
check "whose token goes to the next client" has next_attach=0 next=0

GS_ARB_ARGS=$args service 10000 100000
r=$(victim hup "$ARB_PID")
check "again, with the cap raised by a reload's rule ($r)" \
	has attach=0 cap=0 acquire=0 release=0 parked=1
check "the arbiter survives the reload" kill -0 "$ARB_PID"
check "and closes that client" has closed=1
check "whose token goes to the next client" has next_attach=0 next=0
check "the reload was done" grep -q 'reloaded' "$T/arbiter.log"

# A slice longer than the test: only the holder's leaving hands it over.
GS_ARB_ARGS= service 5000000 5000000
r=$(victim leave)
check "a holder leaves with the client behind it unable to take its grant ($r)" \
	has holder_acquire=0 attach=0 parked=1
check "the waiter behind them gets the token" has waiter=0 waiter_release=0
check "the client that cannot be answered is closed" has closed=1
check "and the token is free again" has next=0
check "the arbiter is still running" kill -0 "$ARB_PID"
check "it said why it closed them" \
	sh -c "[ \$(grep -c 'detached: reply failed' '$T/arbiter.log') -ge 4 ]"
[ "$t_failed" = 0 ] || { diag "$T/victim.err"; diag "$T/arbiter.log"; }
done_testing
