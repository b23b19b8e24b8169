#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# gpuschedd --arbiter does for its own token what the netlink mode does for
# the module: Prometheus metrics of its GPUs and clients (--metrics), and
# gpuschedctl status, clients, top, set, watch and --json work against it
# with the module's output. Three busy clients weighted 1:2:4 show shares
# within 5 points of the weights; root may change a client's weight and a
# GPU's knobs, nobody gets EPERM and changes nothing, and so does root
# without the capability the module would ask for (CAP_NET_ADMIN to change
# others, CAP_SYS_NICE to raise its own weight).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

log=$T/ctl-arbiter.log
port=$(free_port)
# A named policy file must exist: the test uses its own, empty.
: >"$T/policy.conf"
chmod 0644 "$T/policy.conf"
arbiter_start "$log" --verbose --config "$T/policy.conf" --metrics "127.0.0.1:$port" --grace-us 500000 ||
	bail "arbiter did not start: $(cat "$log")"
check "the arbiter serves metrics on a loopback port" grep -q "metrics on http://127.0.0.1:$port/metrics" "$log"

ctl() { "$CTL" "$@"; }
parses() { python3 -m json.tool "$1" >/dev/null; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
scrape() {
	python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode(), end="")' "$port"
}

# Three busy clients, weights 1:2:4 (100, 200, 400), started together,
# running until every check below that needs them has run, however long
# a loaded host takes: SIGUSR1 ends them (as if their time were up).
secs=600
at=$(start_at)
for w in 100 200 400; do
	run_bg "w$w" client GS_START_AT=$at GPUSCHED_WEIGHT=$w GPUSCHED_LABEL="job-$w" "$GS_CLIENT" \
		--seconds "$secs" --kernel-us 500
done
sleep 2.5	# 1 to 2 s to the common start, then running

ctl status >"$T/status.out" 2>&1
check "gpuschedctl status against the arbiter" grep -q '^gpu0  GPU-' "$T/status.out"
check "status shows the three clients and the knobs" \
	sh -c "grep -q 'clients 3,' '$T/status.out' && grep -q 'timeslice_us=20000 grace_us=500000' '$T/status.out'"
diag "$T/status.out"

ctl --json status >"$T/status.json" 2>&1
check "status --json parses" parses "$T/status.json"
check "and names the GPU, its clients and its knobs" python3 - "$T/status.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
sys.exit(not (len(g) == 1 and g[0]["clients"] == 3 and g[0]["timeslice_us"] == 20000
              and g[0]["uuid"].startswith("GPU-")))
PY

ctl clients -i 2 >"$T/clients.out" 2>&1
diag "$T/clients.out"
check "gpuschedctl clients: a table with the three clients" \
	test "$(grep -c ' gs-cuda-client ' "$T/clients.out")" = 3
# SHARE of each weight, from the table: within 5 points of 1/7, 2/7, 4/7.
for w in 100 200 400; do
	sh=$(awk -v w=$w '$7 == w { sub("%", "", $10); print $10 }' "$T/clients.out")
	want=$(awk -v w=$w 'BEGIN { printf "%.1f", 100 * w / 700 }')
	check "weight $w: share ${sh:-none}% within 5 points of $want%" within "${sh:-0}" "$want" 5
done
check "gpuschedctl clients: each client's time on the GPU in the interval (ONGPU)" \
	test "$(awk '$5 == "gs-cuda-client" && $12 ~ /^[0-9.]+%$/' "$T/clients.out" | wc -l)" = 3

ctl --json clients -i 1 >"$T/clients.json" 2>&1
check "clients --json parses" parses "$T/clients.json"
check "clients --json: shares within 5 points of the weights" python3 - "$T/clients.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clients"]
w = sum(x["weight"] for x in c)
bad = [x for x in c if abs(x["share_pct"] - 100.0 * x["weight"] / w) > 5]
print("# " + ", ".join("weight %d: %.1f%%" % (x["weight"], x["share_pct"]) for x in c))
sys.exit(len(c) != 3 or bool(bad))
PY
# The GPU time each client's library reported (timed on the double's
# clock): never more than it was charged, the larger of the two per grant.
check "clients --json: each client's GPU time, above zero and at most the time charged" python3 - "$T/clients.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clients"]
print("# " + ", ".join("weight %d: %.3f s on the GPU of %.3f s charged, %s%% in the interval"
                       % (x["weight"], x["gpu_ns"] / 1e9, x["held_ns"] / 1e9, x["gpu_pct"]) for x in c))
sys.exit(len(c) != 3 or any(not 0 < x["gpu_ns"] <= x["held_ns"] or x["gpu_pct"] is None
                            for x in c))
PY
check "clients --json: each client's label from its environment" python3 - "$T/clients.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clients"]
sys.exit(sorted(x["label"] for x in c) != ["job-100", "job-200", "job-400"] or
         any(x["label"] != "job-%d" % x["weight"] for x in c))
PY

# The arbiter reads what SO_PEERCRED does not tell from /proc (procfs.c):
# the command name (above) and the inode of the cgroup v2 entry's directory.
for w in 100 200 400; do
	pid=$(cat "$T/w$w.pid")
	ino=$(stat -c %i "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")")
	check "clients --json: weight $w's cgroup id is its cgroup's inode ($ino)" \
		grep -q "\"pid\":$pid,[^}]*\"cgroup_id\":$ino," "$T/clients.json"
done

ctl top -n 1 -i 0.5 >"$T/top.out" 2>&1
check "top prints a refresh against the arbiter" grep -q '^gpuschedctl top - .* 3 clients' "$T/top.out"
ctl --json top -n 2 -i 0.3 >"$T/top.json" 2>&1
check "top --json: one JSON document per refresh" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
sys.exit(len(lines) != 2 or any(len(json.loads(l)["clients"]) != 3 for l in lines))' "$T/top.json"

# Metrics, while the three run.
scrape >"$T/metrics.out" 2>&1
check "metrics: a gpusched_client_info line per client" \
	test "$(grep -c '^gpusched_client_info{gpu="0",id="[0-9]*",pid="[0-9]*",comm="gs-cuda-client",uid="0",gid="0",class="normal",state="[a-z]*"} 1$' "$T/metrics.out")" = 3
check "metrics: each client's weight, labelled as the module's" sh -c "
	grep -q '^gpusched_client_weight{gpu=\"0\",id=\"[0-9]*\",pid=\"$(cat "$T/w400.pid")\",comm=\"gs-cuda-client\",uid=\"0\"} 400$' '$T/metrics.out'"
check "metrics: held time and grants counted for every client" python3 - "$T/metrics.out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
held = [float(v) for v in re.findall(r'^gpusched_client_held_seconds_total\{.*\} (\S+)$', t, re.M)]
grants = [int(v) for v in re.findall(r'^gpusched_client_grants_total\{.*\} (\S+)$', t, re.M)]
print("# held %s s, grants %s" % (held, grants))
sys.exit(len(held) != 3 or min(held) <= 0.1 or min(grants) < 5)
PY
check "metrics: GPU time reported for every client" python3 - "$T/metrics.out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
gpu = [float(v) for v in re.findall(r'^gpusched_client_gpu_seconds_total\{.*\} (\S+)$', t, re.M)]
print("# GPU time %s s" % gpu)
sys.exit(len(gpu) != 3 or min(gpu) <= 0)
PY
check "metrics: the GPU's totals and knobs" sh -c "
	grep -q '^gpusched_gpu_clients{gpu=\"0\"} 3$' '$T/metrics.out' &&
	grep -q '^gpusched_gpu_timeslice_seconds{gpu=\"0\"} 0.020000$' '$T/metrics.out' &&
	grep -q '^gpuschedd_events_total{type=\"attach\"} 3$' '$T/metrics.out'"

# set client: root changes the weight, nobody cannot.
pid=$(cat "$T/w100.pid")
weight_of() {
	ctl --json clients -i 0 | python3 -c '
import json, sys
print(" ".join(str(c["weight"]) for c in json.load(sys.stdin)["clients"] if c["pid"] == int(sys.argv[1])))' "$1"
}
as_nobody "$CTL" set client "$pid" weight=5000 >"$T/nobody.out" 2>&1
rc=$?
diag "$T/nobody.out"
check "nobody: set client fails (exit 1, got $rc)" test $rc = 1
check "with permission denied (EPERM)" grep -q 'permission denied' "$T/nobody.out"
check "and the weight is unchanged ($(weight_of "$pid"))" test "$(weight_of "$pid")" = 100
as_nobody "$CTL" set gpu 0 timeslice_us=2000 >"$T/nobody-gpu.out" 2>&1
check "nobody: set gpu fails with EPERM" sh -c "test $? = 1 && grep -q 'permission denied' '$T/nobody-gpu.out'"
as_nobody "$CTL" clients -i 0 >"$T/nobody-read.out" 2>&1
diag "$T/nobody-read.out"
check "nobody: reads work, root's 3 clients without their pid and command" \
	test "$(grep -Ec '^0 +- +[0-9]+ +root +- +normal ' "$T/nobody-read.out")" = 3
as_nobody "$CTL" watch >"$T/nobody-watch.out" 2>&1
check "nobody: watch is refused with EPERM" sh -c "test $? = 1 && grep -q 'permission denied' '$T/nobody-watch.out'"

# Root without the capabilities the module would ask for (a rootful
# container's root, which has neither): no more than nobody.
setpriv --bounding-set=-net_admin "$CTL" set client "$pid" weight=5000 >"$T/nocap.out" 2>&1
rc=$?
diag "$T/nocap.out"
check "root without CAP_NET_ADMIN: set client fails with EPERM (exit $rc)" \
	sh -c "test $rc = 1 && grep -q 'permission denied' '$T/nocap.out'"
check "and the weight is unchanged ($(weight_of "$pid"))" test "$(weight_of "$pid")" = 100
run_bg nocap setpriv --bounding-set=-sys_nice env LD_PRELOAD="$GS_LIB" GPUSCHED_WEIGHT=400 \
	"$GS_CLIENT" --seconds 1.5 --kernel-us "$(us 200)"
for _ in $(seq 50); do
	w=$(weight_of "$(cat "$T/nocap.pid")")
	[ -n "$w" ] && break
	sleep 0.05
done
check "root without CAP_SYS_NICE: GPUSCHED_WEIGHT=400 does not raise its weight ($w)" test "$w" = 100
wait_bg nocap

ctl set client "$pid" weight=700 >"$T/root.out" 2>&1
check "root: set client PID weight=700 succeeds" test $? = 0
check "and the weight is 700 ($(weight_of "$pid"))" test "$(weight_of "$pid")" = 700
metrics_has() { scrape >"$T/metrics2.out"; grep -q "$1" "$T/metrics2.out" || { grep _weight "$T/metrics2.out" | diag; false; }; }
check "the metrics show the new weight" \
	metrics_has "^gpusched_client_weight{.*pid=\"$pid\",comm=\"gs-cuda-client\",uid=\"0\"} 700$"
ctl set client 999999 weight=10 >"$T/esrch.out" 2>&1
check "set client of no such pid: exit 1, 'no client'" sh -c "test $? = 1 && grep -q 'no client with pid 999999' '$T/esrch.out'"

# set gpu, by index and by UUID.
ctl set gpu 0 timeslice_us=5000 grace_us=250000 >"$T/setgpu.out" 2>&1
check "root: set gpu 0 timeslice_us=5000 grace_us=250000" test $? = 0
ctl status >"$T/status2.out"
check "status shows the new knobs" grep -q 'timeslice_us=5000 grace_us=250000' "$T/status2.out"
uuid=$(awk '/^gpu0 / { print $2 }' "$T/status2.out")
ctl set gpu "$uuid" timeslice_us=4000 >/dev/null 2>&1
check "set gpu by UUID ($uuid)" sh -c "'$CTL' status | grep -q 'timeslice_us=4000 '"
ctl set gpu 7 timeslice_us=4000 >"$T/nodev.out" 2>&1
check "set gpu of no such GPU: exit 1, 'no GPU'" sh -c "test $? = 1 && grep -q 'no GPU gpu7' '$T/nodev.out'"

# watch: attach and detach of a client, as JSON Lines.
ctl --json watch >"$T/watch.out" 2>"$T/watch.err" &
echo $! >"$T/watch.pid"
sleep 0.3
run_bg short client "$GS_CLIENT" --seconds 0.2 --kernel-us 200
short=$(cat "$T/short.pid")
wait_bg short
sleep 0.3
kill "$(cat "$T/watch.pid")" 2>/dev/null
wait_bg watch
diag "$T/watch.out" "$T/watch.err"
check "watch: attach and detach of the new client" python3 - "$T/watch.out" "$short" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [e["event"] for e in ev if e["pid"] == int(sys.argv[2])]
sys.exit(mine != ["attach", "detach"])
PY
check "watch: the detach carries the client's GPU time, at most what it was charged" python3 - "$T/watch.out" "$short" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
d = [e for e in ev if e["pid"] == int(sys.argv[2]) and e["event"] == "detach"]
print("# %s" % ["%d ns on the GPU of %d ns charged" % (e["gpu_ns"], e["held_ns"]) for e in d])
sys.exit(len(d) != 1 or not 0 < d[0]["gpu_ns"] <= d[0]["held_ns"])
PY

for w in 100 200 400; do
	kill -USR1 "$(cat "$T/w$w.pid")"
	wait_bg "w$w" || not_ok "client of weight $w failed"
done
check "no overlap on the GPU" [ "$(violations)" = 0 ]
check "the arbiter is still running" kill -0 "$ARB_PID"
diag "$log"
done_testing
