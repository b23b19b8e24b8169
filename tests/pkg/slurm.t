#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Slurm through the SPANK plugin: munged, slurmctld and slurmd on this one
# machine, from a configuration the test writes, with spank_gpusched.so in
# plugstack.conf pointing at an arbiter of the test. `srun --gpu-weight=300`
# runs the CUDA double's client; gpuschedctl lists it with weight 300, and
# its environment carries the job's label, slurm-JOBID; gres/shard counts
# become weights (shard_weight=). Root, like CI.
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/tap.sh

LIB=$PWD/build/libgpusched/libgpusched.so.1
DAEMON=$PWD/build/daemon/gpuschedd
CTL=$PWD/build/daemon/gpuschedctl
CLIENT=$PWD/build/tests/cuda-double/gs-cuda-client
SPANK=$PWD/build/slurm/spank_gpusched.so
for f in "$LIB" "$DAEMON" "$CTL" "$CLIENT" "$SPANK"; do
	[ -e "$f" ] || skip_all "$f not built (make user; the plugin needs libslurm-dev)"
done
[ "$(id -u)" = 0 ] || skip_all "needs root (slurmd)"
for t in munged slurmctld slurmd srun python3; do
	command -v $t >/dev/null || skip_all "no $t: run tests/tools/install-deps.sh"
done
[ -r /etc/munge/munge.key ] || skip_all "no /etc/munge/munge.key (the munge package makes it)"

T=$(mktemp -d /tmp/gs-slurm.XXXXXX)
chmod 0755 "$T"
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	[ -f "$T/munge/munged.pid" ] && kill "$(cat "$T/munge/munged.pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
wait_for() {	# wait_for SECONDS COMMAND...
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# --- munge, with its socket in $T (no systemd here).
mkdir -m 0700 "$T/munge"
chown munge:munge "$T/munge" 2>/dev/null
MSOCK=$T/munge/munge.socket
munged --force --socket="$MSOCK" --pid-file="$T/munge/munged.pid" \
	--seed-file="$T/munge/seed" --log-file="$T/munge/munged.log" \
	--key-file=/etc/munge/munge.key >"$T/munged.out" 2>&1
check "munged starts" wait_for 5 test -S "$MSOCK"

# --- an arbiter, and the cluster of one node.
: >"$T/policy.conf"
SOCK=$T/arbiter.sock
"$DAEMON" --arbiter --config "$T/policy.conf" --socket "$SOCK" 2>"$T/arbiter.log" &
PIDS="$PIDS $!"
check "the arbiter listens" wait_for 5 grep -q 'listening on' "$T/arbiter.log"

ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
set -- $ports
NODE=$(hostname -s)
mkdir -p "$T/state" "$T/spool"
cat >"$T/plugstack.conf" <<EOF
required $SPANK library=$LIB arbiter=$SOCK shard_weight=150
EOF
cat >"$T/slurm.conf" <<EOF
ClusterName=gstest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MSOCK
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
PlugStackConfig=$T/plugstack.conf
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=gstest Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D -f "$SLURM_CONF" -N "$NODE" >"$T/slurmd.out" 2>&1 &
PIDS="$PIDS $!"
if ! check "slurmctld and slurmd start; the node is idle" \
	wait_for 30 sh -c "sinfo -h -o %t | grep -qx idle"; then
	diag_file "$T/slurmctld.log" 20
	diag_file "$T/slurmd.log" 20
	done_testing
	exit
fi

check "srun --help lists --gpu-weight, --gpu-class and --gpu-cap" \
	sh -c "srun --help | grep -q -- --gpu-weight && srun --help | grep -q -- --gpu-class && srun --help | grep -q -- --gpu-cap"
check "srun --gpu-weight=0 is refused" not srun --gpu-weight=0 true

# Runs until told to stop (SIGUSR1, below): its environment is read while
# it lives, however long the cluster takes to start it.
srun --gpu-weight=300 --gpu-class=batch -N1 -n1 env GPUSCHED_DEBUG=stats \
	"$CLIENT" --seconds 60 --kernel-us 500 >"$T/out" 2>&1 &
run=$!
# Listed, with what the job asked for (a client attaches, then asks).
got_client() {
	GPUSCHED_ARBITER=$SOCK "$CTL" --json clients -i 0 >"$T/clients.json" 2>&1 &&
		python3 -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["comm"] == "gs-cuda-client"]
sys.exit(not (len(c) == 1 and c[0]["weight"] == 300 and c[0]["class"] == "batch"))' "$T/clients.json"
}
if ! check "gpuschedctl clients --json: the job's client, weight 300, class batch" \
	wait_for 30 got_client; then
	diag_file "$T/clients.json"
fi
pid=$(python3 -c 'import json, sys
print([c for c in json.load(open(sys.argv[1]))["clients"] if c["comm"] == "gs-cuda-client"][0]["pid"])' \
	"$T/clients.json" 2>/dev/null)
job=$(squeue -h -o %i | head -n 1)
check "gpuschedctl clients --json: the job's label, slurm-${job:-?}" python3 -c 'import json, sys
sys.exit([c["label"] for c in json.load(open(sys.argv[1]))["clients"]
          if c["comm"] == "gs-cuda-client"] != ["slurm-" + sys.argv[2]])' "$T/clients.json" "$job"
check "the client (pid ${pid:-?}) carries the job's label, slurm-${job:-?}, and the preload" \
	sh -c "tr '\0' '\n' </proc/$pid/environ | grep -qx 'GPUSCHED_LABEL=slurm-$job' &&
		tr '\0' '\n' </proc/$pid/environ | grep -qx 'LD_PRELOAD=$LIB'"
[ -n "$pid" ] && kill -USR1 "$pid" 2>/dev/null
wait "$run"
rc=$?
check "srun succeeds, and the library gated the launches" \
	sh -c "test $rc = 0 && grep -Eq 'gated=[1-9]' '$T/out'"
diag_file "$T/out" 5

# Without options: the preload and the label, no weight. With N gres/shard
# (SLURM_SHARDS_ON_NODE, which the test sets as Slurm would): N * 150.
srun env >"$T/env0" 2>&1
check "a job without options: the preload and the label, and no GPUSCHED_WEIGHT" \
	sh -c "grep -qx 'LD_PRELOAD=$LIB' '$T/env0' && grep -q '^GPUSCHED_LABEL=slurm-' '$T/env0' && ! grep -q '^GPUSCHED_WEIGHT=' '$T/env0'"
SLURM_SHARDS_ON_NODE=2 srun env >"$T/env2" 2>&1
check "2 shards and shard_weight=150: GPUSCHED_WEIGHT=300" grep -qx 'GPUSCHED_WEIGHT=300' "$T/env2"
SLURM_SHARDS_ON_NODE=2 srun --gpu-weight=40 env >"$T/env3" 2>&1
check "--gpu-weight wins over shards" grep -qx 'GPUSCHED_WEIGHT=40' "$T/env3"
# A job's own LD_PRELOAD of more than 4 KiB stays whole, after the library.
long=$(for i in $(seq 400); do printf '/nonexistent/gs-preload-%03d.so:' "$i"; done)
long=${long%:}
LD_PRELOAD=$long srun env >"$T/env4" 2>/dev/null
check "a job's LD_PRELOAD of ${#long} bytes kept whole, after the library" \
	grep -qxF "LD_PRELOAD=$LIB:$long" "$T/env4"
done_testing
