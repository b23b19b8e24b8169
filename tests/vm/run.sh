#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh SERIES   (SERIES: 6.1, 6.12, ...)
# VM_KIMAGE=bzImage VM_KDIR=tree run.sh TAG   (another kernel, e.g. a debug one)
#
# Build gpusched.ko against the installed Debian kernel of SERIES, boot that
# kernel under QEMU with the module and the in-VM test programs, and print
# TAP for prove: the module build, one line per test program, rmmod, and
# the kernel log. Artefacts (build log, console, results) stay in
# build/vm-KVER/.
#
# Environment:
#   VM_TESTS    test programs to run (default build/kselftest/bin/*)
#   VM_EXTRA    "hostpath:guestpath ..." more files for the VM; executables
#               under /tests/ run as tests; shared libraries they need are
#               copied too
#   VM_TIMEOUT  seconds for the whole boot (default 600)
#   VM_TEST_TIMEOUT  seconds for one test program (default 180)
#   VM_SMP, VM_MEM  QEMU -smp and -m (default 2 and 1024)
#   VM_INSMOD_ARGS  module parameters (default max_gpus=64: tokens live
#               until rmmod, and every test program creates its own)
#   VM_KO       load this gpusched.ko (e.g. the one DKMS installed under
#               /lib/modules/KVER/, .ko.xz or .ko.zst too) instead of
#               building one; it must have been built for the kernel booted
#   VM_KIMAGE, VM_KDIR  boot this kernel image and build the module against
#               this built tree instead of a Debian kernel; the argument is
#               then only a tag naming build/vm-TAG/ (tests/debug/ uses it)
#   VM_APPEND   more words for the kernel command line (a word without a
#               dot reaches init, and so the tests, as an environment
#               variable)
#   VM_KLOG_FILTER  a command that rewrites the kernel log (standard input
#               to standard output) before it is judged, marking reports
#               that are not gpusched's "set aside" (tests/debug/kcsan-filter);
#               the logs as written stay in *.raw
set -eu

SERIES=${1:?usage: run.sh SERIES}
cd "$(dirname "$0")/../.."
ROOT=$PWD
VM_TESTS=${VM_TESTS:-$(echo build/kselftest/bin/*)}
VM_EXTRA=${VM_EXTRA:-}
VM_TIMEOUT=${VM_TIMEOUT:-600}
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-180}
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-1024}
VM_INSMOD_ARGS=${VM_INSMOD_ARGS-max_gpus=64}
VM_KO=${VM_KO:-}
VM_KIMAGE=${VM_KIMAGE:-}
VM_KDIR=${VM_KDIR:-}
VM_APPEND=${VM_APPEND:-}
VM_KLOG_FILTER=${VM_KLOG_FILTER:-}

# What the kernel writes when something is wrong. Matched against the
# console and each test's kernel log. Not kmemleak's "new suspected memory
# leaks": most are the kernel's own; its reports are judged below. Not
# "lockdep" either: a debug kernel says "RCU lockdep checking is enabled"
# at boot; lockdep reports start with WARNING: or BUG:, and it says
# "turning off the locking correctness validator" when it gives up.
KLOG_BAD='BUG:|WARNING:|Oops|general protection|Call Trace|possible circular locking|possible recursive locking|inconsistent lock state|locking correctness validator|UBSAN|KASAN|refcount_t|list_add corruption|list_del corruption|sleeping function called from invalid context|blocked for more than|detected stall|Kernel panic'

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
# Standard input as TAP diagnostics.
diag() {
	sed -e 's/\r$//' -e 's/^/#   /'
}
finish() {
	echo "1..$n"
	exit $failed
}

# The newest installed kernel of the series that also has its headers.
# "6.1.*" cannot match 6.12: the dot is literal.
KVER=
[ -n "$VM_KIMAGE" ] && KVER=$SERIES
[ -n "$VM_KIMAGE" ] || for img in $(printf '%s\n' /boot/vmlinuz-"$SERIES".* | sort -V); do
	k=${img#/boot/vmlinuz-}
	[ -d "/usr/src/linux-headers-$k" ] && KVER=$k
done
if [ -z "$KVER" ]; then
	echo "Bail out! no kernel $SERIES with headers in /boot and /usr/src: run tests/tools/install-deps.sh"
	exit 1
fi
KDIR=${VM_KDIR:-/usr/src/linux-headers-$KVER}
KIMAGE=${VM_KIMAGE:-/boot/vmlinuz-$KVER}
# A run of a given module keeps its artefacts apart from the usual run's.
OUT=$ROOT/build/vm-$KVER${VM_KO:+-prebuilt}
mkdir -p "$OUT"
# Two runs for one kernel (developers sharing a tree) would overwrite each
# other's module, image and logs: the second waits.
exec 9>"$OUT/.lock"
flock 9
echo "# kernel $KVER, artefacts in ${OUT#"$ROOT"/}"

for t in $VM_TESTS; do
	if [ ! -f "$t" ] || [ ! -x "$t" ]; then
		echo "Bail out! no test program $t: run make vm-tests"
		exit 1
	fi
done

# --- the module, built from a private copy so that the kernel versions and
# the developer's own `make module` never share objects. A clean copy every
# time: an incremental build would hide warnings of unchanged files.
build_module() {
	local src=$OUT/kmod-src cc
	rm -rf "$src"
	mkdir -p "$src"
	cp -r Kbuild dkms.conf kmod "$src/"
	# Build with the compiler the kernel was built with (Debian's 6.12
	# headers name x86_64-linux-gnu-gcc-12, not gcc), when it is here.
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$KDIR/.config")
	command -v "$cc" >/dev/null 2>&1 || cc=gcc
	make -C "$KDIR" M="$src" CC="$cc" W=1 modules >"$OUT/build.log" 2>&1
}
if [ -n "$VM_KO" ]; then
	vermagic=$(modinfo -F vermagic "$VM_KO" 2>/dev/null || true)
	if [ "${vermagic%% *}" != "$KVER" ]; then
		not_ok "$VM_KO is a module for $KVER (its vermagic: '$vermagic')"
		finish
	fi
	mkdir -p "$OUT/kmod-src"
	# DKMS compresses as the kernel's own modules are (6.12: xz).
	case $VM_KO in
	*.xz) xz -dc "$VM_KO" >"$OUT/kmod-src/gpusched.ko" ;;
	*.zst) zstd -qdc "$VM_KO" >"$OUT/kmod-src/gpusched.ko" ;;
	*) cp "$VM_KO" "$OUT/kmod-src/gpusched.ko" ;;
	esac
	ok "$VM_KO is a module for $KVER"
elif ! build_module; then
	not_ok "gpusched.ko builds against $KVER"
	diag <"$OUT/build.log"
	finish
# W=1 asks for the extra warnings; modpost warns in capitals.
elif grep -q -E 'warning:|WARNING:' "$OUT/build.log"; then
	not_ok "gpusched.ko builds against $KVER without warnings (W=1)"
	grep -E -B2 -A4 'warning:|WARNING:' "$OUT/build.log" | diag
	finish
else
	ok "gpusched.ko builds against $KVER without warnings (W=1)"
fi

# --- the initramfs
IMG=$OUT/root
rm -rf "$IMG"
mkdir -p "$IMG"/{bin,dev,proc,sys,tmp,tests}
cp /bin/busybox "$IMG/bin/busybox"
cp tests/vm/init "$IMG/init"
cp "$OUT/kmod-src/gpusched.ko" "$IMG/gpusched.ko"
echo "$VM_INSMOD_ARGS" >"$IMG/gpusched.args"
# shellcheck disable=SC2086 # a list of paths
cp -p $VM_TESTS "$IMG/tests/"

# Copy a host file to the same path in the image, with the shared libraries
# and dynamic loader it needs (ldd lists them as absolute paths).
add_with_libs() {
	local host=$1 guest=$2 lib
	mkdir -p "$IMG$(dirname "$guest")"
	cp -pL "$host" "$IMG$guest"
	for lib in $(ldd "$host" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$IMG$lib" ] && continue
		mkdir -p "$IMG$(dirname "$lib")"
		cp -L "$lib" "$IMG$lib"
	done
}
for pair in $VM_EXTRA; do
	host=${pair%%:*}
	guest=${pair#*:}
	if [ "$host" = "$pair" ] || [ ! -e "$host" ]; then
		echo "Bail out! VM_EXTRA: '$pair' is not hostpath:guestpath of an existing file"
		exit 1
	fi
	add_with_libs "$host" "$guest"
done

# Programs expected to run, to report the ones a crash kept from running.
TESTS=$(cd "$IMG/tests" && for t in *; do
	[ -f "$t" ] && [ -x "$t" ] && echo "$t"; done | LC_ALL=C sort)

(cd "$IMG" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -1 >"$OUT/initramfs.cpio.gz"

# --- boot. No -nographic: it would put the host terminal in raw mode; the
# console goes to a file and the results port (ttyS1) to another.
# loglevel=5 lets KERN_WARNING (WARN() splats) reach the console. A
# parameter with no dot reaches init as an environment variable.
#
# A kernel that dies before our init runs (init's first record, "boot") has
# not met the module: the emulated 6.12 kernel once took an int3 Oops in
# sched_clock_cpu() while patching its text at boot. That boot is retried
# once, its console kept as console-boot1.log; a crash after init started
# is never retried.
CONSOLE=$OUT/console.log
RESULTS=$OUT/results.log
rm -f "$CONSOLE" "$RESULTS" "$OUT/console-boot1.log"
for attempt in 1 2; do
	start=$(date +%s)
	set +e
	# tsc=reliable: the emulated TSC drifts from the emulated HPET when
	# the host is busy, and the clocksource watchdog then switches clocks
	# at run time, patching the kernel's text with int3 breakpoints while
	# other vCPUs run it, which multi-threaded TCG can get wrong (an
	# "Oops: int3" in sched_clock_cpu). The TSC here never stops.
	# RDRAND, trusted: the random pool is ready in the first 0.1 s of boot,
	# on the boot CPU alone. Without a source the emulated machine gathers
	# entropy for minutes, and its "crng init done" flips a static branch
	# in the middle of the tests, the same int3 patching (an "Oops: int3"
	# in crng_make_state during a fork).
	# trace_event=initcall:initcall_finish: an event on from boot keeps
	# the tracer's record of task names (its probes on sched_switch and
	# sched_wakeup) registered from the boot CPU's early init on. The
	# function tracer takes that record whenever it starts
	# (kselftest/overrun), and the first to take it registers the probes,
	# patching those tracepoints' branches in the scheduler's hottest
	# paths while the other vCPU runs them (an "Oops: int3" in
	# ttwu_do_activate); later ones only count. That event fires at boot
	# only.
	timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
		-machine pc -accel tcg,thread=multi -cpu qemu64,+rdrand \
		-m "$VM_MEM" -smp "$VM_SMP" \
		-display none -monitor none -no-reboot \
		-serial "file:$CONSOLE" \
		-chardev "file,id=results,path=$RESULTS" -device isa-serial,chardev=results \
		-kernel "$KIMAGE" -initrd "$OUT/initramfs.cpio.gz" \
		-append "console=ttyS0 loglevel=5 panic=-1 tsc=reliable random.trust_cpu=on trace_event=initcall:initcall_finish GSVM_TEST_TIMEOUT=$VM_TEST_TIMEOUT $VM_APPEND" \
		</dev/null >"$OUT/qemu.log" 2>&1
	qemu_rc=$?
	set -e
	echo "# VM ran $(($(date +%s) - start)) s, qemu exit status $qemu_rc"
	touch "$RESULTS" "$CONSOLE"
	grep -q '@@gsvm boot' "$RESULTS" && break
	[ "$attempt" = 1 ] || break
	echo "# the kernel died before init ran; booting once more. Its console:"
	tail -n 20 "$CONSOLE" | diag
	mv "$CONSOLE" "$OUT/console-boot1.log"
	rm -f "$RESULTS"
done

# --- results. Split the results file into one file per step under
# $OUT/steps/: NAME.out (program output), NAME.rc, NAME.klog.
STEPS=$OUT/steps
rm -rf "$STEPS"
mkdir -p "$STEPS"
awk -v dir="$STEPS" '
	{ sub(/\r$/, "") }
	/@@gsvm / {
		# A record may follow output that lacked its last newline.
		i = index($0, "@@gsvm ")
		if (i > 1 && file != "")
			print substr($0, 1, i - 1) > file
		split(substr($0, i + 7), f, " ")
		if (f[1] == "insmod" || f[1] == "rmmod") {
			print f[2] > (dir "/" f[1] ".rc")
			file = dir "/" f[1] ".out"
		} else if (f[1] == "test") {
			file = dir "/" f[2] ".out"
		} else if (f[1] == "rc") {
			print f[3] > (dir "/" f[2] ".rc")
			file = ""
		} else if (f[1] == "kmemleak") {
			file = dir "/kmemleak-" f[2]
			printf "" > file	# an empty report is a result too
		} else if (f[1] == "klog") {
			file = dir "/" f[2] ".klog"
		} else if (f[1] == "done") {
			print "" > (dir "/done")
			file = ""
		}
		next
	}
	file != "" { print > file }
' "$RESULTS"

if [ -n "$VM_KLOG_FILTER" ]; then
	for f in "$STEPS"/*.klog "$CONSOLE"; do
		[ -f "$f" ] || continue
		mv "$f" "$f.raw"
		$VM_KLOG_FILTER <"$f.raw" >"$f"
	done
fi

# Whether the kernel log written during step $1 shows a kernel problem.
klog_bad() {
	[ -f "$STEPS/$1.klog" ] && grep -E "$KLOG_BAD" "$STEPS/$1.klog" >/dev/null
}

if [ "$(cat "$STEPS/insmod.rc" 2>/dev/null)" != 0 ] || klog_bad insmod; then
	not_ok "insmod gpusched.ko $VM_INSMOD_ARGS"
	cat "$STEPS/insmod.out" "$STEPS/insmod.klog" 2>/dev/null | diag
	tail -n 40 "$CONSOLE" | diag
	for t in $TESTS; do
		not_ok "$t # not run"
	done
else
	ok "insmod gpusched.ko $VM_INSMOD_ARGS"
	for t in $TESTS; do
		rc=$(cat "$STEPS/$t.rc" 2>/dev/null || echo none)
		case $rc in
		0) status= ;;
		4) status=" # SKIP" ;;	# KSFT_SKIP: a skip-all plan
		137) status=" (killed by the $VM_TEST_TIMEOUT s timeout)" ;;
		none) status=" (did not finish: VM crashed or timed out)" ;;
		*) status=" (exit status $rc)" ;;
		esac
		if [ "$rc" != 0 ] && [ "$rc" != 4 ]; then
			not_ok "$t$status"
		elif klog_bad "$t"; then
			not_ok "$t (kernel log)"
		else
			ok "$t$status"
		fi
		[ -f "$STEPS/$t.out" ] && diag <"$STEPS/$t.out"
		if klog_bad "$t"; then
			echo "kernel log:" | diag
			grep -E -B5 -A20 "$KLOG_BAD" "$STEPS/$t.klog" | diag
		fi
	done
fi

if [ "$(cat "$STEPS/rmmod.rc" 2>/dev/null)" = 0 ] && ! klog_bad rmmod; then
	ok "rmmod gpusched"
else
	not_ok "rmmod gpusched"
	cat "$STEPS/rmmod.out" "$STEPS/rmmod.klog" 2>/dev/null | diag
fi

# kmemleak, on a kernel that has it: init scanned after the tests (while
# the module's symbols resolve) and after rmmod (when they do not: its
# frames show as bare addresses). A leak counts when its allocation
# backtrace names gpusched or has such a frame; others are the kernel's.
gs_leaks() {
	awk '/^unreferenced object/ { if (blk != "" && mine) print blk; blk = ""; mine = 0 }
		{ blk = blk $0 "\n" }
		/gpusched|\[<[0-9a-f]+>\] 0x[0-9a-f]+$/ { mine = 1 }
		END { if (blk != "" && mine) print blk }' "$1"
}
for when in tests rmmod; do
	f=$STEPS/kmemleak-$when
	[ -f "$f" ] || continue
	leaks=$(gs_leaks "$f")
	total=$(grep -c '^unreferenced object' "$f" || true)
	if [ -z "$leaks" ]; then
		ok "kmemleak after $when: no leak from gpusched ($total other reports)"
	else
		not_ok "kmemleak after $when: leaks from gpusched"
		printf '%b' "$leaks" | head -n 60 | diag
	fi
done

# What the filter set aside: listed, one line per kind, not failed.
if [ -n "$VM_KLOG_FILTER" ]; then
	aside=$(grep -c 'set aside' "$CONSOLE" || true)
	ok "kernel log: $aside reports set aside by $VM_KLOG_FILTER"
	sed -e 's/\r$//' -e 's/^\[[^]]*\] //' -n -e '/set aside/p' "$CONSOLE" |
		sort | uniq -c | sort -rn | diag
fi

# The whole console: catches what the per-step logs cannot, such as a
# panic that stopped init.
if [ -f "$STEPS/done" ] && [ "$qemu_rc" = 0 ] &&
	! grep -E "$KLOG_BAD" "$CONSOLE" >/dev/null; then
	ok "clean kernel log, VM powered off"
else
	not_ok "clean kernel log, VM powered off"
	[ -f "$STEPS/done" ] || echo "init did not finish" | diag
	[ "$qemu_rc" = 0 ] || echo "qemu exit status $qemu_rc (124: timeout)" | diag
	grep -E "$KLOG_BAD" "$CONSOLE" | head -n 20 | diag
	echo "console: $CONSOLE" | diag
fi
finish
