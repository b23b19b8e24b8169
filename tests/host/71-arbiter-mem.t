#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Device memory accounting in gpuschedd --arbiter, the cases the module's
# kselftest (tests/kselftest/mem.c) has: gs-mem-test on the arbiter's
# protocols. Then what an administrator sees and does: rules with a
# mem_limit in bytes and in percent applied at attach, gpuschedctl status,
# clients and --json with the reservation and the limit, gpuschedctl set
# mem_limit, and the Prometheus metrics.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
MEMT=$(find_file "$t_root/build/tests/host/gs-mem-test") || bail "gs-mem-test not built"
CTL=${GS_CTL:-$(find_file "$t_root/build/daemon/gpuschedctl")} || bail "gpuschedctl not built"

cat >"$T/policy.conf" <<'EOF_CONF'
[rule quarter]
label = memquarter
mem_limit = 25%
[rule onegig]
label = memfixed
mem_limit = 1G
EOF_CONF
chmod 0644 "$T/policy.conf"
port=$(free_port)
log=$T/arbiter.log
arbiter_start "$log" --verbose --config "$T/policy.conf" --metrics "127.0.0.1:$port" ||
	bail "arbiter did not start: $(cat "$log")"

"$MEMT" "$GPUSCHED_ARBITER" >"$T/raw" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok "mem: ${line#ok * - }" ;;
	"not ok "*) l=${line#not ok }; not_ok "mem: ${l#* - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done <"$T/raw"
check "gs-mem-test ran to its end (exit $rc, plan printed)" \
	sh -c "grep -q '^1\.\.[0-9]' '$T/raw' && [ $rc -lt 128 ]"

# Rules: 25% of the 8 GiB the client reports; 1 GiB.
check "a rule's mem_limit = 25% applies at attach" \
	sh -c "GPUSCHED_LABEL=memquarter '$MEMT' '$GPUSCHED_ARBITER' limit | grep -qx 'limit 2147483648'"
check "a rule's mem_limit = 1G applies at attach" \
	sh -c "GPUSCHED_LABEL=memfixed '$MEMT' '$GPUSCHED_ARBITER' limit | grep -qx 'limit 1073741824'"

# A client holding 768 MiB under the 1 GiB rule, until its stdin ends.
mkfifo "$T/hold.in"
GPUSCHED_LABEL=memfixed "$MEMT" "$GPUSCHED_ARBITER" hold 805306368 <"$T/hold.in" >"$T/hold.out" &
echo $! >"$T/hold.pid"
exec 9>"$T/hold.in"
i=0
while ! grep -q held "$T/hold.out" && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "a client holds 768 MiB" grep -q held "$T/hold.out"
hold=$(cat "$T/hold.pid")

"$CTL" --json clients -i 0 >"$T/clients.json" 2>&1
check "clients --json: used and limit of the client" python3 - "$T/clients.json" "$hold" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
sys.exit(not (len(c) == 1 and c[0]["mem_reserved"] == 805306368 and
              c[0]["mem_limit"] == 1073741824 and c[0]["mem_total"] == 8 << 30 and
              c[0]["mem_refused"] == 0))
PY
"$CTL" clients -i 0 >"$T/clients.out" 2>&1
diag "$T/clients.out"
check "clients: the table says 768M of 1.0G" \
	sh -c "grep ' $hold ' '$T/clients.out' | grep -q ' 768M/1.0G'"
"$CTL" --json status >"$T/status.json" 2>&1
check "status --json: the GPU's sum and its memory knobs" python3 - "$T/status.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
sys.exit(not (len(g) == 1 and g[0]["mem_reserved"] == 805306368 and
              "mem_default_pct" in g[0] and "mem_reserve_mb" in g[0]))
PY

check "gpuschedctl set client mem_limit=512M" "$CTL" set client "$hold" mem_limit=512M
"$CTL" --json clients -i 0 >"$T/clients2.json" 2>&1
check "the limit is 512 MiB, below what is held, which stays" python3 - "$T/clients2.json" "$hold" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
sys.exit(not (len(c) == 1 and c[0]["mem_limit"] == 512 << 20 and
              c[0]["mem_reserved"] == 805306368))
PY
check "gpuschedctl set client mem_limit=50%" "$CTL" set client "$hold" mem_limit=50%
"$CTL" --json clients -i 0 >"$T/clients3.json" 2>&1
check "the limit is half of the client's 8 GiB" python3 - "$T/clients3.json" "$hold" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
sys.exit(not (len(c) == 1 and c[0]["mem_limit"] == 4 << 30))
PY
"$CTL" set client "$hold" mem_limit=lots >"$T/bad.out" 2>&1
check "a bad mem_limit is refused with the reason" grep -q 'mem_limit "lots": not a number' "$T/bad.out"

python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode(), end="")' \
	"$port" >"$T/metrics" 2>&1
check "metrics: the client's reservation" \
	grep -q "^gpusched_client_mem_reserved_bytes{.*pid=\"$hold\".*} 805306368$" "$T/metrics"
check "metrics: the client's limit" \
	grep -q "^gpusched_client_mem_limit_bytes{.*pid=\"$hold\".*} 4294967296$" "$T/metrics"
check "metrics: the GPU's sum" grep -q '^gpusched_gpu_mem_reserved_bytes{gpu="0"} 805306368$' "$T/metrics"
check "metrics: refusals counted per client" grep -q '^gpusched_client_mem_refused_total{' "$T/metrics"

exec 9>&-
wait "$hold"
done_testing
