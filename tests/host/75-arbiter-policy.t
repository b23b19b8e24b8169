#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# gpuschedd --arbiter applies the policy file as the netlink daemon does for
# the module: the first matching rule to each client as it attaches, the
# file's GPU knobs, a reload on SIGHUP that keeps the policy in force when
# the new file has an error, and a broken file refused at start.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

conf=$T/policy.conf
log=$T/policy-arbiter.log
cat >"$conf" <<'CONF'
[gpu]
timeslice_us = 3000
mem_reserve_mb = 64

[rule labelled]
label = policy-test
weight = 40
class = batch
CONF

start() {
	: >"$log"
	arbiter_start "$log" --verbose --config "$conf"
}

start
check "the arbiter starts with a policy file" grep -q 'listening on' "$log"
check "it says how many rules it loaded" grep -q 'loaded .*: 1 rules' "$log"

GPUSCHED_LABEL=policy-test client "$GS_CLIENT" --kernel-us 200 --seconds 0.3 \
	>/dev/null 2>>"$log"
check "a client with the rule's label gets the rule" \
	grep -q 'rule labelled applied' "$log"
client "$GS_CLIENT" --kernel-us 200 --seconds 0.3 >/dev/null 2>>"$log"
check "a client without it does not" \
	test "$(grep -c 'rule labelled applied' "$log")" = 1
"$CTL" --socket "$GPUSCHED_ARBITER" status >"$T/status" 2>&1
check "the file's GPU knobs are the token's, the memory ones too" \
	grep -q 'timeslice_us=3000 .*mem_reserve_mb=64' "$T/status"

# A broken file on SIGHUP: refused with its line, the old policy stays.
printf '[rule broken]\nweight = lots\n' >"$conf"
kill -HUP "$ARB_PID"
sleep 0.3
check "a broken file on SIGHUP is refused with file and line" \
	grep -q "policy.conf:2: .*keeping the policy in force" "$log"
GPUSCHED_LABEL=policy-test client "$GS_CLIENT" --kernel-us 200 --seconds 0.3 \
	>/dev/null 2>>"$log"
check "the old policy stays in force" \
	test "$(grep -c 'rule labelled applied' "$log")" = 2

# A changed file on SIGHUP is applied to later clients.
printf '[rule renamed]\nlabel = policy-test\nweight = 20\n' >"$conf"
kill -HUP "$ARB_PID"
sleep 0.3
check "a good file on SIGHUP is reloaded" grep -q 'reloaded .*: 1 rules' "$log"
GPUSCHED_LABEL=policy-test client "$GS_CLIENT" --kernel-us 200 --seconds 0.3 \
	>/dev/null 2>>"$log"
check "the new rule applies" grep -q 'rule renamed applied' "$log"
stop_arbiter

# A broken file at start: refused, with its line.
printf '[rule broken]\nweight = lots\n' >"$conf"
"$GS_DAEMON" --arbiter --config "$conf" --socket "$T/other.sock" \
	>"$T/out" 2>&1
rc=$?
check "a broken file at start is refused (exit 1)" test $rc = 1
check "with file, line and reason" grep -q 'policy.conf:2: ' "$T/out"
diag "$log"
done_testing
