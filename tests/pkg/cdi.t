#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Containers through CDI: gpusched-cdi writes the spec for the module and
# for an arbiter; with the arbiter's spec, a container of a busybox-static
# root filesystem started with `podman run --device gpusched.io/token=all`
# runs the CUDA double's client under the injected library, which attaches
# to the host's arbiter: gpuschedctl lists it. Where podman cannot run a
# container in this sandbox, the spec's own mounts and environment are
# applied by unshare and chroot instead, and the podman step is a SKIP.
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/tap.sh

LIB=$PWD/build/libgpusched/libgpusched.so.1
DAEMON=$PWD/build/daemon/gpuschedd
CTL=$PWD/build/daemon/gpuschedctl
CLIENT=$PWD/build/tests/cuda-double/gs-cuda-client
for f in "$LIB" "$DAEMON" "$CTL" "$CLIENT"; do
	[ -x "$f" ] || [ -f "$f" ] || skip_all "$f not built (make user)"
done
[ "$(id -u)" = 0 ] || skip_all "needs root (containers, mounts)"
[ -x /bin/busybox ] || skip_all "no /bin/busybox (busybox-static)"
command -v python3 >/dev/null || skip_all "no python3"

T=$(mktemp -d /tmp/gs-cdi.XXXXXX)
SPEC=/var/run/cdi/gpusched-test-$$.yaml
ARB_PID=
cleanup() {
	[ -n "$ARB_PID" ] && kill "$ARB_PID" 2>/dev/null && wait "$ARB_PID" 2>/dev/null
	rm -f "$SPEC"
	umount -R "$T/root" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# --- the spec's contents, both modes.
yget() {	# yget FILE EXPR: EXPR over the spec s, printed
	python3 -c 'import sys, yaml
s = yaml.safe_load(open(sys.argv[1])); d = s["devices"][0]["containerEdits"]
print(eval(sys.argv[2]))' "$1" "$2"
}
check "gpusched-cdi --mode kmod" cdi/gpusched-cdi --mode kmod --library "$LIB" -o "$T/kmod.yaml"
check "kmod spec: kind gpusched.io/token, device all" \
	test "$(yget "$T/kmod.yaml" 's["kind"] + "=" + s["devices"][0]["name"]')" = gpusched.io/token=all
check "kmod spec: /dev/gpusched, no socket" \
	test "$(yget "$T/kmod.yaml" '[n["path"] for n in d["deviceNodes"]], len(d["mounts"])')" = "(['/dev/gpusched'], 1)"
check "kmod spec: the library read-only, and LD_PRELOAD naming it" \
	test "$(yget "$T/kmod.yaml" '[(m["hostPath"], m["containerPath"], "ro" in m["options"]) for m in d["mounts"]], d["env"]')" = \
	"([('$LIB', '/usr/lib/gpusched/libgpusched.so.1', True)], ['LD_PRELOAD=/usr/lib/gpusched/libgpusched.so.1'])"
check "gpusched-cdi --mode auto fails when neither the module nor an arbiter is there" \
	not env GPUSCHED_ARBITER="$T/none.sock" cdi/gpusched-cdi --library "$LIB" -o -

# --- an arbiter, and the spec that points at it.
mkdir -p "$T/run"
SOCK=$T/run/arbiter.sock
: >"$T/policy.conf"
"$DAEMON" --arbiter --verbose --config "$T/policy.conf" --socket "$SOCK" 2>"$T/arbiter.log" &
ARB_PID=$!
for _ in $(seq 100); do grep -q 'listening on' "$T/arbiter.log" && break; sleep 0.05; done
check "the arbiter listens on $SOCK" grep -q 'listening on' "$T/arbiter.log"
check "gpusched-cdi --mode auto picks the arbiter" \
	sh -c "GPUSCHED_ARBITER='$SOCK' cdi/gpusched-cdi --library '$LIB' -o '$T/arb.yaml' 2>&1 | grep -q '(arbiter)'"
check "arbiter spec: its socket's directory, GPUSCHED_ARBITER, no device node" \
	test "$(yget "$T/arb.yaml" '[m["containerPath"] for m in d["mounts"]][1], d["env"][1], "deviceNodes" in d')" = \
	"('$T/run', 'GPUSCHED_ARBITER=$SOCK', False)"

# The socket's directory goes into every container: never a shared one.
check "a socket directly under /run is refused" \
	not sh -c "cdi/gpusched-cdi --mode arbiter --socket /run/arbiter.sock --library '$LIB' -o - >/dev/null 2>&1"
: >"$T/run/other"
check "so is a directory that holds more than the socket" \
	not sh -c "cdi/gpusched-cdi --mode arbiter --socket '$SOCK' --library '$LIB' -o - >/dev/null 2>&1"
rm -f "$T/run/other"

# --- a busybox root filesystem with the CUDA double's client and the
# host's libc for it; the library comes only from the spec.
R=$T/root
mkdir -p "$R"/{bin,dev,proc,sys,tmp,run,opt/gs,usr/lib/gpusched}
cp /bin/busybox "$R/bin/busybox"
ln -s busybox "$R/bin/sh"
cp "$CLIENT" "$(dirname "$CLIENT")/libcuda.so.1" "$R/opt/gs/"
for l in $( (ldd "$CLIENT"; ldd "$LIB") | grep -o '/[^ ]*' | sort -u); do
	mkdir -p "$R$(dirname "$l")"
	cp -L "$l" "$R$l"
done

CLIENT_ENV="GPUSCHED_DEBUG=stats GPUSCHED_LABEL=cdi-test GPUSCHED_WEIGHT=50"
CLIENT_CMD="/opt/gs/gs-cuda-client --seconds 4 --kernel-us 500"
# gpuschedctl's list has the container's client, with the weight it asked
# for (it attaches first, then asks), while the container runs.
listed() {
	GPUSCHED_ARBITER=$SOCK "$CTL" --json clients -i 0 >"$T/clients.json" 2>&1 &&
		python3 -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["comm"] == "gs-cuda-client"]
sys.exit(not (len(c) == 1 and c[0]["weight"] == 50))' "$T/clients.json"
}
seen() {
	for _ in $(seq 60); do
		listed && return 0
		sleep 0.1
	done
	cat "$T/clients.json"
	return 1
}
client_checks() {	# client_checks HOW: the container's output in $T/out
	check "$1: the client ran and the injected library gated its launches" \
		sh -c "grep -Eq 'gated=[1-9]' '$T/out'"
	diag_file "$T/out" 8
}

mkdir -p "$(dirname "$SPEC")"
cp "$T/arb.yaml" "$SPEC"
# Podman as it comes, else with runc and lower limits: in some sandboxes
# crun refuses hybrid cgroups and neither may set the default rlimits.
podman_ok=
for opts in "" "--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024"; do
	command -v podman >/dev/null || break
	# shellcheck disable=SC2086 # words
	if podman run --rm --network none $opts --rootfs "$R" /bin/busybox true \
		>>"$T/podman-probe.log" 2>&1; then
		podman_ok=1
		break
	fi
done
if [ -n "$podman_ok" ]; then
	echo "# podman run ${opts:-(no options)}"
	# shellcheck disable=SC2086 # words
	podman run --rm --network none $opts --device gpusched.io/token=all \
		$(printf -- '-e %s ' $CLIENT_ENV) --rootfs "$R" $CLIENT_CMD >"$T/out" 2>&1 &
	run=$!
	check "podman: gpuschedctl clients lists the container's client, weight 50" seen
	wait "$run"
	check "podman run --device gpusched.io/token=all succeeds" test $? = 0
	client_checks podman
else
	skip "podman run --device gpusched.io/token=all" \
		"podman cannot run a container here: $(tail -n 1 "$T/podman-probe.log" 2>/dev/null)"
fi

# The spec by hand: its mounts (read-only where it says so) and its
# environment, in a mount namespace, chrooted into the same root.
python3 - "$T/arb.yaml" "$R" >"$T/apply.sh" <<'EOF'
import shlex, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))["devices"][0]["containerEdits"]
root = sys.argv[2]
for m in d.get("mounts", []):
    dst = shlex.quote(root + m["containerPath"])
    src = shlex.quote(m["hostPath"])
    print(f"mkdir -p {dst} 2>/dev/null || touch {dst}")
    print(f"mount --bind {src} {dst}")
    if "ro" in m.get("options", []):
        print(f"mount -o remount,bind,ro {dst}")
for n in d.get("deviceNodes", []):
    print(f"touch {shlex.quote(root + n['path'])}; mount --bind {n['path']} {shlex.quote(root + n['path'])}")
print("exec env " + " ".join(shlex.quote(e) for e in d.get("env", [])) + ' "$@"')
EOF
# The library's directory exists in the root; a file mount needs a file.
touch "$R/usr/lib/gpusched/libgpusched.so.1"
mkdir -p "$R$T/run"
# shellcheck disable=SC2086 # words
# /proc as a container has it (the loader finds $ORIGIN through it).
unshare --mount --fork sh -c "mount -t proc proc '$R/proc' && . '$T/apply.sh'" apply \
	env $CLIENT_ENV chroot "$R" $CLIENT_CMD \
	>"$T/out" 2>&1 &
run=$!
check "unshare: gpuschedctl clients lists the client, weight 50" seen
wait "$run"
check "unshare + chroot with the spec's mounts and environment succeeds" test $? = 0
client_checks unshare
done_testing
