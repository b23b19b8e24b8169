#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The arbiter's per-user client limit, as the module's max_clients_per_uid
# (kselftest uid-limit): with --max-clients-per-uid N, one user's (N+1)th
# client of a GPU gets EUSERS while another user, the same user on
# another GPU, and root still attach; a client that leaves makes room.
# The user is the uid that SO_PEERCRED gives, so each connection is made
# with that effective uid.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root to connect as other users"; exit 0; }

GS_ARB_ARGS="--max-clients-per-uid 3" service 10000 500000

# Each word: UID:GPU attaches a client of user UID to GPU GPU and keeps it;
# "close" closes the oldest kept (arbwire.py). Prints each attach's errno
# (0: attached).
attach() { python3 "$(dirname "$0")/arbwire.py" "$GPUSCHED_ARBITER" gsUIDLIM "$@"; }

u=65534
v=65533
r=$(attach $u:1 $u:1 $u:1 $u:1)
check "a user's 4th client of one GPU gets EUSERS with a limit of 3 ($r)" \
	[ "$r" = "0 0 0 87" ]
r=$(attach $u:1 $u:1 $u:1 $v:1 $v:1)
check "with the first user at its limit, another user attaches ($r)" \
	[ "$r" = "0 0 0 0 0" ]
r=$(attach $u:1 $u:1 $u:1 $u:2)
check "and the first user to another GPU ($r)" [ "$r" = "0 0 0 0" ]
r=$(attach 0:1 0:1 0:1 0:1 0:1)
check "root is exempt ($r)" [ "$r" = "0 0 0 0 0" ]
r=$(attach $u:1 $u:1 $u:1 close $u:1 $u:1)
check "a client that leaves makes room for one ($r)" [ "$r" = "0 0 0 0 87" ]
check "the arbiter is still running" kill -0 "$ARB_PID"
done_testing
