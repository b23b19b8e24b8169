#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the VM: an external generic netlink client, libnl's genl-ctrl-list
# (Debian's libnl-utils), sees the family "gpusched" with its version, its
# four operations (reads open to all, changes admin-only, get-gpu with
# both do and dump) and its "events" multicast group.
set -u

if [ ! -c /dev/gpusched ]; then
	echo "1..0 # SKIP no /dev/gpusched"
	exit 4
fi
echo "1..3"
out=$(/usr/bin/genl-ctrl-list -d 2>&1)
rc=$?
# The family's block: its header line, then indented lines.
block=$(echo "$out" | awk '/^0x[0-9a-f]+ /{ on = ($2 == "gpusched") } on')
failed=0
if [ $rc -eq 0 ] && echo "$block" | grep -q "^0x[0-9a-f]* gpusched version 1$"; then
	echo "ok 1 - genl-ctrl-list lists the family gpusched, version 1"
else
	echo "not ok 1 - genl-ctrl-list lists the family gpusched, version 1 (exit $rc)"
	echo "$out" | sed 's/^/#   /'
	failed=1
fi
echo "$block" | sed 's/^/# /'

# op 1 get-gpu, 2 set-gpu, 3 get-client, 4 set-client.
want="0x01 has_doit,has_dump,has_policy
0x02 admin_perm,has_doit,has_policy
0x03 has_dump,has_policy
0x04 admin_perm,has_doit,has_policy"
got=$(echo "$block" | sed -n 's/^ *op [^(]*(\(0x[0-9a-f]*\)) <\([^>]*\)>.*/\1 \2/p' |
	sed 's/,$//')
if [ "$got" = "$want" ]; then
	echo "ok 2 - its operations: get-gpu (do, dump), set-gpu (admin), get-client (dump), set-client (admin)"
else
	echo "not ok 2 - its operations: get-gpu (do, dump), set-gpu (admin), get-client (dump), set-client (admin)"
	echo "# want:"; echo "$want" | sed 's/^/#   /'
	echo "# got:"; echo "$got" | sed 's/^/#   /'
	failed=1
fi

if echo "$block" | grep -q "^ *grp events (0x[0-9a-f]*)"; then
	echo "ok 3 - its multicast group events"
else
	echo "not ok 3 - its multicast group events"
	failed=1
fi
exit $failed
