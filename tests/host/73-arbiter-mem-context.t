#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The context's own device memory, what NVML says a process uses on a GPU
# less what it reserved through gpusched, in gpuschedctl clients and the
# Prometheus metrics; and nothing of it, said once in the log, without
# NVML. The CUDA double's contexts take $GS_DOUBLE_CTX_MEM each, which no
# allocation entry point sees; its NVML double lists the processes.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ "$BACKEND" = arbiter ] || { echo "1..0 # SKIP the arbiter's own test"; exit 0; }
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
[ -n "$GS_CTL" ] || bail "gpuschedctl not built"
[ -e "$GS_DOUBLE_DIR/libnvidia-ml.so.1" ] || bail "the NVML double is not built"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
metrics() {
	python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode(), end="")' \
		"$port" >"$1" 2>&1
}
# Both the daemon and gpuschedctl find NVML's double on LD_LIBRARY_PATH.
GS_ARB_ARGS="--verbose --metrics 127.0.0.1:$port"
service 20000 100000
export GS_DOUBLE_CTX_MEM=300M

# ready NAME: wait until the client NAME has made $T/NAME.ready.
ready() {
	i=0
	while [ ! -e "$T/$1.ready" ] && kill -0 "$(cat "$T/$1.pid")" 2>/dev/null &&
		[ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	test -e "$T/$1.ready"
}

run_bg mem client "$GS_MEM" alloc 1G touch "$T/mem.ready" wait "$T/end"
mem=$(cat "$T/mem.pid")
check "a client holds 1 GiB in a context of 300 MiB" ready mem

"$GS_CTL" --json clients -i 0 >"$T/clients.json" 2>&1
check "clients --json: 1 GiB reserved, 300 MiB of context" python3 - "$T/clients.json" "$mem" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
sys.exit(not (len(c) == 1 and c[0]["mem_reserved"] == 1 << 30 and
              c[0]["mem_context"] == 300 << 20))
PY
"$GS_CTL" clients -i 0 >"$T/clients.out" 2>&1
diag "$T/clients.out"
check "clients: a MEM CTX column" sh -c "head -1 '$T/clients.out' | grep -q 'MEM USED/LIMIT  MEM CTX\$'"
check "clients: the client's 300M in it" \
	sh -c "grep ' $mem ' '$T/clients.out' | grep -q ' 1.0G/none  *300M\$'"

# gpuschedd samples NVML on a thread every 5 s, never in its event loop:
# scrape until a sample has the client (bounded only so that a failure ends).
ctx_line="^gpusched_client_mem_context_bytes{.*pid=\"$mem\".*} 314572800$"
i=0
while metrics "$T/metrics" && ! grep -q "$ctx_line" "$T/metrics" && [ $i -lt 40 ]; do
	sleep 0.5
	i=$((i + 1))
done
check "metrics: the client's context memory" grep -q "$ctx_line" "$T/metrics"

# gpuschedctl without NVML: no column, null in JSON.
LD_LIBRARY_PATH=$T/none "$GS_CTL" clients -i 0 >"$T/clients2.out" 2>&1
check "clients without NVML: no MEM CTX column" sh -c "! grep -q 'MEM CTX' '$T/clients2.out'"
LD_LIBRARY_PATH=$T/none "$GS_CTL" --json clients -i 0 >"$T/clients2.json" 2>&1
check "clients --json without NVML: mem_context null" python3 - "$T/clients2.json" "$mem" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
sys.exit(not (len(c) == 1 and c[0]["mem_context"] is None))
PY
touch "$T/end"
wait_bg mem
check "the client ran to its end" test $? -eq 0

# The daemon without NVML: no metric, and one line in its debug log.
keep=$LD_LIBRARY_PATH
LD_LIBRARY_PATH=$T/none
service 20000 100000
LD_LIBRARY_PATH=$keep
run_bg mem2 client "$GS_MEM" alloc 1G touch "$T/mem2.ready" wait "$T/end2"
check "a client holds 1 GiB" ready mem2
# Scrape until the sampler has found no NVML, then once more.
i=0
while metrics "$T/metrics2" && ! grep -q 'no NVML' "$T/arbiter.log" && [ $i -lt 40 ]; do
	sleep 0.5
	i=$((i + 1))
done
sleep 0.5
metrics "$T/metrics3"
check "metrics without NVML: the reservation" \
	grep -q "^gpusched_client_mem_reserved_bytes{.*} 1073741824$" "$T/metrics3"
check "metrics without NVML: no context memory" sh -c "! grep -q mem_context '$T/metrics2' '$T/metrics3'"
check "the log says so once" sh -c "[ \"\$(grep -c 'no NVML' '$T/arbiter.log')\" = 1 ]"
touch "$T/end2"
wait_bg mem2
done_testing
