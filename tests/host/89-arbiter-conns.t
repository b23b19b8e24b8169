#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Connections that never become clients cannot lock others out of the
# arbiter: a user may hold as many connections as its clients could need
# (2 x --max-gpus x --max-clients-per-uid, a client and its memory channel
# on every token), never more than half the arbiter's descriptors, and
# its next ones are closed at once; root is exempt. All users but root
# together hold at most three quarters of the descriptors. A connection that
# sends no request within 5 s is closed. Before the fix one user holding
# idle connections up to the descriptor limit kept every other client out.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root to connect as other users"; exit 0; }

# conns.py WORD...: each word UID:N opens N connections as user UID and
# keeps them, sending nothing; "close" closes the oldest kept; "sleep:S"
# waits S seconds; "ask" sends GET_INFO on the newest kept and reads the
# answer. After each word but "sleep", prints how many of those kept are
# still open (once the arbiter has taken every connection made so far);
# after "ask", its answer. UID:attach attaches a client of user UID on a
# connection of its own instead, and prints attach=ERRNO, attach=closed
# if the arbiter closed the connection or attach=timeout after 10 s;
# UID:attachN attaches N, one connection each, and prints attached=K, how
# many were attached.
cat >"$T/conns.py" <<'PY'
import os, select, socket, struct, sys, time
sys.path.insert(0, os.environ["ARBWIRE_DIR"])
from arbwire import *

path = os.environ["GPUSCHED_ARBITER"]
kept, out = [], []

def open_ones():
    # The listen queue is in order: once root's GET_INFO is answered on a
    # connection made after them, the arbiter has taken (or closed) all.
    s = conn(path)
    request(s, GET_INFO_IOC)
    answer(s)
    s.close()
    p = select.poll()
    for k in kept:
        p.register(k, select.POLLHUP)
    gone = {fd for fd, ev in p.poll(0) if ev & select.POLLHUP}
    return sum(k.fileno() not in gone for k in kept)

try:
    for word in sys.argv[1:]:
        if word == "close":
            kept.pop(0).close()
        elif word.startswith("sleep:"):
            time.sleep(float(word[6:]))
            continue
        elif word == "ask":
            request(kept[-1], GET_INFO_IOC)
            out.append("ask=%d" % answer(kept[-1]))
        elif ":attach" in word:
            uid, _, n = word.partition(":attach")
            got = []
            for _ in range(int(n or 1)):
                s = conn(path, int(uid))
                kept.append(s)
                try:
                    err = attach_on(s, b"gsCONNLM" + (1).to_bytes(8, "little"))
                    got.append("attach=%d" % -err)
                except socket.timeout:
                    got.append("attach=timeout")
                except (OSError, struct.error):
                    got.append("attach=closed")
            if n:
                out.append("attached=%d" % got.count("attach=0"))
            else:
                out.extend(got)
            continue
        else:
            uid, n = word.split(":")
            for _ in range(int(n)):
                kept.append(conn(path, int(uid)))
        out.append(str(open_ones()))
except OSError as e:
    out.append(type(e).__name__)
print(" ".join(out))
PY
conns() { ARBWIRE_DIR=$(dirname "$0") python3 "$T/conns.py" "$@"; }

u=65534
v=65533
# 2 x 1 GPU x 2 clients: 4 connections a user.
GS_ARB_ARGS="--max-gpus 1 --max-clients-per-uid 2" service 10000 500000
r=$(conns $u:6)
check "a user's connections past 2 x 1 x 2 are closed at once ($r)" [ "$r" = 4 ]
r=$(conns $u:4 $v:3)
check "with one user at its limit, another connects ($r)" [ "$r" = "4 7" ]
r=$(conns $u:4 0:6)
check "and root, which is exempt ($r)" [ "$r" = "4 10" ]
r=$(conns $u:4 close $u:2)
check "a connection that closes makes room for one ($r)" [ "$r" = "4 3 4" ]
r=$(conns $u:4 $u:attach 0:attach)
check "a user at its limit cannot attach another client, root can ($r)" \
	[ "$r" = "4 attach=closed attach=0" ]
check "the arbiter says so, once" [ "$(grep -c 'uid 65534 has 4 connections' "$T/arbiter.log")" = 1 ]

# A connection that sends nothing is closed after 5 s; one that asked is kept.
r=$(conns $u:1 ask $u:1 sleep:6 0:0)
check "a connection with no request in 5 s is closed, one that asked is kept ($r)" \
	[ "$r" = "1 ask=0 1 2 1" ]

# The descriptor limit: 64, so a user may have 32 connections. Nobody
# holds 60 idle ones; root and another user still get in.
stop_arbiter
log=$T/fds.log
AS_NOFILE=64 arbiter_start "$log" || bail "arbiter did not start: $(cat "$log")"
r=$(conns $u:60 0:attach $v:attach)
check "one user's idle connections stop at half of 64 descriptors; root and another user attach ($r)" \
	[ "$r" = "32 attach=0 attach=0" ]
# Users together (here two with 32 clients each, a user's half) stop at
# three quarters of the descriptors: root still gets in. Before, their
# clients, never idle, filled the descriptors and root's attach timed out.
r=$(conns $u:attach32 $v:attach32 0:attach)
check "two users' clients stop at 48 of 64 descriptors; root attaches ($r)" \
	[ "$r" = "attached=32 attached=16 attach=0" ]
check "the arbiter says so, once" \
	[ "$(grep -c 'users other than root have 48 connections' "$log")" = 1 ]
check "the arbiter is still running" kill -0 "$ARB_PID"
[ "$t_failed" = 0 ] || { diag "$T/arbiter.log"; diag "$log"; }
done_testing
