#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the VM: the kernel's own generic YNL client, tools/net/ynl/cli.py of
# linux-source-6.12, drives the family from Documentation/netlink/specs/
# gpusched.yaml alone. It dumps GPUs and clients, sets a client's weight
# and class as root, and the same set fails for an unprivileged user and
# changes nothing while that user's reads work; the events group reports
# attaches and detaches to root and refuses the unprivileged user.
#
# The VM has Debian's python3.11 with the part of the standard library
# that cli.py uses, in /usr/lib/python311.zip (tests/netlink/pyzip.py).
set -u

H=/usr/libexec/gpusched-tests/gs-nl-helper
SPEC=/usr/share/gpusched/gpusched.yaml
GPU=64		# NL_GPU_YNL of tests/netlink/nl_test.h
NOBODY="65534 65534"
# The zip holds the standard library; PYTHONHOME stops the interpreter
# from searching for a full installation (and warning that it has none).
export PYTHONHOME=/usr
cli() {
	/usr/bin/python3 /opt/ynl/cli.py --spec "$SPEC" --no-schema "$@"
}
# cli.py as nobody.
cli_nobody() {
	# shellcheck disable=SC2086 # the uid and the gid
	$H runas $NOBODY /usr/bin/python3 /opt/ynl/cli.py --spec "$SPEC" --no-schema "$@"
}
# A JSON document on stdin, and a Python expression about it, d.
jq_py() {
	/usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

if [ ! -c /dev/gpusched ]; then
	echo "1..0 # SKIP no /dev/gpusched"
	exit 4
fi

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $*"
}
# check NAME COMMAND...: a test line from the command's status; its output
# as diagnostics when it fails.
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name"
		echo "$out" | sed 's/^/#   /'
	fi
}
# refused NAME ARG...: a test line, ok when cli.py with the ARGs as nobody
# fails with EPERM.
refused() {
	name=$1
	shift
	out=$(cli_nobody "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -q "Operation not permitted"; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		echo "$out" | sed 's/^/#   /'
	fi
}
echo "1..10"

T=/tmp/nl-ynl
mkdir -p $T
start=$(date +%s)
$H hold $GPU >$T/hold </dev/null 2>&1 &
holder=$!
trap 'kill $holder 2>/dev/null' EXIT
i=0
while ! grep -q ^ready $T/hold && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
read -r _ pid index id uuid <$T/hold
echo "# client $id of pid $pid on gpu$index ($uuid)"

# 1. A dump of GPUs lists ours, with the UUID as the spec displays it.
cli --output-json --dump get-gpu >$T/gpus 2>&1
check "dump get-gpu lists the GPU $uuid" \
	sh -c "jq_() { /usr/bin/python3 -c \"import json,sys; d=json.load(open('$T/gpus')); sys.exit(0 if [g for g in d if g['index'] == $index and g['uuid'] == '$uuid' and g['nr-clients'] >= 1] else 1)\"; }; jq_ || { cat $T/gpus; exit 1; }"
took=$(($(date +%s) - start))
echo "# python3 and cli.py: first answer after $took s (emulated CPU)"

# 2. do get-gpu by index.
check "do get-gpu {index: $index} has the knobs" \
	sh -c "cli() { /usr/bin/python3 /opt/ynl/cli.py --spec $SPEC --no-schema \"\$@\"; }; cli --output-json --do get-gpu --json '{\"index\": $index}' | /usr/bin/python3 -c \"import json,sys; d=json.load(sys.stdin); sys.exit(0 if d['uuid'] == '$uuid' and d['timeslice-us'] > 0 else 1)\""

# 3. A dump of the GPU's clients has the holder.
dump_client() {
	cli --output-json --dump get-client --json "{\"gpu\": $index}" |
		jq_py "[c for c in d if c['id'] == $id][0]$1"
}
got=$(dump_client "['pid']" 2>&1)
if [ "$got" = "$pid" ]; then ok "dump get-client {gpu: $index} has client $id of pid $pid"
else not_ok "dump get-client {gpu: $index} has client $id of pid $pid"; echo "# got: $got"; fi

# 4. Root sets weight and class.
if out=$(cli --do set-client --json "{\"id\": $id, \"weight\": 250, \"class\": \"batch\"}" 2>&1); then
	got=$(dump_client "['weight'], d[0]['class'] if False else [c for c in d if c['id'] == $id][0]['class']" 2>&1)
	if [ "$got" = "250 batch" ]; then ok "root: do set-client weight 250, class batch"
	else not_ok "root: do set-client weight 250, class batch"; echo "# dump says: $got"; fi
else
	not_ok "root: do set-client weight 250, class batch"
	echo "$out" | sed 's/^/#   /'
fi

# 5. The same request from an unprivileged user fails with EPERM.
refused "unprivileged: do set-client fails with EPERM" \
	--do set-client --json "{\"id\": $id, \"weight\": 9999}"

# 6. ... and changed nothing.
got=$(dump_client "['weight']" 2>&1)
if [ "$got" = 250 ]; then ok "unprivileged: the weight is still 250"
else not_ok "unprivileged: the weight is still 250"; echo "# got: $got"; fi

# 7. The same for set-gpu.
refused "unprivileged: do set-gpu fails with EPERM" \
	--do set-gpu --json "{\"index\": $index, \"timeslice-us\": 200}"

# 8. Reads work unprivileged.
got=$(cli_nobody --output-json --dump get-client --json "{\"gpu\": $index}" 2>&1 |
	jq_py "[c for c in d if c['id'] == $id][0]['weight']" 2>&1)
if [ "$got" = 250 ]; then ok "unprivileged: dump get-client works"
else not_ok "unprivileged: dump get-client works"; echo "# got: $got"; fi

# 9. Events: root subscribes and sees clients come and go. The
# subscriber prints what it collected when its sleep ends; blips keep
# coming until then, since its start-up time is unknown here.
cli --output-json --subscribe events --sleep 12 >$T/events 2>&1 &
sub=$!
i=0
while kill -0 $sub 2>/dev/null && [ $i -lt 40 ]; do
	$H blip $GPU >>$T/blips 2>&1
	sleep 0.5
	i=$((i + 1))
done
wait $sub
if /usr/bin/python3 -c "
import json, sys
blips = set(int(l) for l in open('$T/blips') if l.strip().isdigit())
evs = json.loads(open('$T/events').read().strip().splitlines()[-1])
att = [e for e in evs if e['name'] == 'ev-attach' and e['msg']['pid'] in blips]
det = [e for e in evs if e['name'] == 'ev-detach' and e['msg']['pid'] in blips]
print('# %d attach and %d detach events of %d blips' % (len(att), len(det), len(blips)))
sys.exit(0 if att and det else 1)
"; then
	ok "root: --subscribe events reports ev-attach and ev-detach"
else
	not_ok "root: --subscribe events reports ev-attach and ev-detach"
	sed 's/^/#   /' $T/events | head -20
fi

# 10. The events group needs CAP_NET_ADMIN.
refused "unprivileged: --subscribe events fails with EPERM" \
	--subscribe events --sleep 1

exit $failed
