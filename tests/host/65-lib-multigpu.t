#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One token per GPU, by UUID: processes on different GPUs run at once;
# processes that reach the same GPU through different CUDA_VISIBLE_DEVICES
# ordinals share one token. Memory allocated from a pool counts on the
# pool's GPU, and on a stream on the stream's.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

export GS_DOUBLE_GPUS=2

# How often a process was asked to yield, from the library's closing stats:
# it either yielded at a launch (yields) or, idle at that moment, released
# (yield_releases).
asked() {
	sed -n 's/.* yields=\([0-9]*\) .* yield_releases=\([0-9]*\) .*/\1 \2/p' "$1" |
		awk '{ n += $1 + $2 } END { print n + 0 }'
}
GS_GPUS="0 1" service "$(us 10000)" 200000

at=$(start_at)
run_bg g0 client GS_START_AT=$at CUDA_VISIBLE_DEVICES=0 "$GS_CLIENT" --seconds 2 --kernel-us "$(us 500)"
run_bg g1 client GS_START_AT=$at CUDA_VISIBLE_DEVICES=1 "$GS_CLIENT" --seconds 2 --kernel-us "$(us 500)"
wait_bg g0 && wait_bg g1 || not_ok "clients failed"
s0=$(value share "$T/g0.out")
s1=$(value share "$T/g1.out")
# Two tokens: neither process ever waits for the other, so neither is ever
# asked to yield (on one token, 10 ms slices, they would be, every slice).
n0=$(asked "$T/g0.err")
n1=$(asked "$T/g1.err")
check "different GPUs: separate tokens, nobody asked to yield ($n0, $n1)" \
	sh -c "[ $n0 = 0 ] && [ $n1 = 0 ]"
sum=$(awk -v a="$s0" -v b="$s1" 'BEGIN { print a + b }')
# And they run at the same time: one token would hold the sum under 1.
# (Not in an emulated VM, whose speed depends on the host's load.)
if [ "$GS_TEST_SCALE" = 1 ]; then
	check "different GPUs run at the same time ($s0 + $s1 = $sum > 1.2)" above "$sum" 1.2
fi
check "no overlap on either GPU" sh -c "[ \"$(violations 0)\" = 0 ] && [ \"$(violations 1)\" = 0 ]"
show g0 g1

rm -f "$GS_DOUBLE_SHM"
# Under emulation slices are ten times longer: give the pair more of
# them, or one late start decides the split.
secs=2
[ "$GS_TEST_SCALE" = 1 ] || secs=6
at=$(start_at)
run_bg a client GS_START_AT=$at CUDA_VISIBLE_DEVICES=1 "$GS_CLIENT" --seconds $secs --kernel-us "$(us 500)" --device 0
run_bg b client GS_START_AT=$at CUDA_VISIBLE_DEVICES=0,1 "$GS_CLIENT" --seconds $secs --kernel-us "$(us 500)" --device 1
wait_bg a && wait_bg b || not_ok "clients failed"
sa=$(value share "$T/a.out")
sb=$(value share "$T/b.out")
check "the same GPU by two ordinals: one token, no overlap" [ "$(violations 1)" = 0 ]
fa=$(awk -v a="$sa" -v b="$sb" 'BEGIN { printf "%.3f", a / (a + b) }')
na=$(asked "$T/a.err")
nb=$(asked "$T/b.err")
check "and it is shared: one token, both asked to yield ($na and $nb times)" \
	sh -c "[ $na -gt 0 ] && [ $nb -gt 0 ]"
# Fairly: the token time the service charged each, at equal weights
# half each. The work done follows only while both get the CPU to
# launch, which a loaded host does not promise: it is shown, not judged.
ha=$(sed -n 's/.* service grants=.* held_us=\([0-9]*\).*/\1/p' "$T/a.err" | head -1)
hb=$(sed -n 's/.* service grants=.* held_us=\([0-9]*\).*/\1/p' "$T/b.err" | head -1)
fh=$(awk -v a="${ha:-0}" -v b="${hb:-0}" 'BEGIN { if (a + b) printf "%.3f", a / (a + b); else print -1 }')
echo "# shares $sa and $sb: the first has $fa of the work done"
check "fairly: the first was charged $fh of the token's time ($ha and $hb us), 0.4..0.6" \
	within "$fh" 0.5 0.1
show a b

# --- memory: what a pool allocates counts on the pool's GPU, whichever
# context is current; a pool in host memory counts on none.
[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
export GS_DOUBLE_MEM=4G
rm -f "$GS_DOUBLE_SHM"
mem pools GPUSCHED_MEM_LIMIT=1G GPUSCHED_DEBUG=stats -- \
	devpool 1 768M alloc 768M devpool 1 512M hostpool 768M
check "768 MiB from a pool on GPU 1, then 768 MiB on GPU 0, 1 GiB limit each" \
	[ "$(at pools 1 r)$(at pools 2 r)" = 00 ]
check "... then GPU 1 refuses 512 MiB more ($(at pools 3 r))" [ "$(at pools 3 r)" = 2 ]
check "768 MiB from a pool in host memory: no GPU's ($(at pools 4 r))" \
	[ "$(at pools 4 r)" = 0 ]
check "at exit, each GPU has 768 MiB reserved ($(reserved pools | xargs))" \
	[ "$(reserved pools | xargs)" = "805306368 805306368" ]
show pools

# A reset of device 0's context takes none of GPU 1's pool with it.
rm -f "$GS_DOUBLE_SHM"
mem poolreset GPUSCHED_MEM_LIMIT=1G GPUSCHED_DEBUG=stats -- \
	devpool 1 768M reset devpool 1 768M
check "768 MiB from a pool on GPU 1, device 0 reset, then 768 MiB more refused ($(at poolreset 3 r))" \
	[ "$(at poolreset 1 r)$(at poolreset 2 r)$(at poolreset 3 r)" = 002 ]
show poolreset

# ... and what a stream-ordered allocation takes, on its stream's GPU.
rm -f "$GS_DOUBLE_SHM"
mem streams GPUSCHED_MEM_LIMIT=1G GPUSCHED_DEBUG=stats -- \
	otherstream 1 768M alloc 768M otherstream 1 512M
check "768 MiB on a stream of GPU 1, then 768 MiB on GPU 0, 1 GiB limit each" \
	[ "$(at streams 1 r)$(at streams 2 r)" = 00 ]
check "... then GPU 1 refuses 512 MiB more ($(at streams 3 r))" [ "$(at streams 3 r)" = 2 ]
show streams
done_testing
