#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Device memory limits: past GPUSCHED_MEM_LIMIT an allocation fails with
# exactly CUDA_ERROR_OUT_OF_MEMORY and one log line, before the driver sees
# it; frees give the bytes back; cuMemGetInfo reports the limit; every
# allocation entry point and every way to reach one (symbol,
# cuGetProcAddress, dlsym, per-thread-stream flavours) is limited; a
# driver that fails after the reservation gets it back; pools do not keep
# reservations; NVML's memory report is clamped as cuMemGetInfo's. The service's account of a client is read from the
# library's counters at exit (GPUSCHED_DEBUG=stats; its status page).
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

[ -n "$GS_MEM" ] || bail "gs-mem-client not built"
service 20000 200000

G=1073741824	# bytes in a GiB
M=1048576	# ... and in a MiB
export GS_DOUBLE_MEM=4G

# refusals NAME: the refusals that NAME logged.
refusals() { grep -c 'refused: CUDA_ERROR_OUT_OF_MEMORY' "$T/$1.err"; }

# --- the limit, the error, frees, cuMemGetInfo
rm -f "$GS_DOUBLE_SHM"
mem lim GPUSCHED_MEM_LIMIT=1G -- alloc 512M alloc 256M alloc 512M info free info \
	alloc 512M info freeall info
check "allocations within the limit succeed" [ "$(at lim 1 r)$(at lim 2 r)" = 00 ]
check "past the limit: exactly CUDA_ERROR_OUT_OF_MEMORY (2), got $(at lim 3 r)" [ "$(at lim 3 r)" = 2 ]
check "one log line for the refusal" [ "$(refusals lim)" = 1 ]
check "it says the limit and the use" \
	grep -q "cuMemAlloc of $((512 * M)) bytes on GPU-.* refused: CUDA_ERROR_OUT_OF_MEMORY (limit $G bytes, $((768 * M)) in use)" "$T/lim.err"
check "the driver never saw the refused allocation" [ "$(double_count mem_refused)" = 0 ]
check "cuMemGetInfo: total is the limit, not the GPU's 4 GiB ($(at lim 4 total))" [ "$(at lim 4 total)" = $G ]
check "cuMemGetInfo: free is what the limit leaves ($(at lim 4 free))" [ "$(at lim 4 free)" = $((256 * M)) ]
check "a free gives its bytes back ($(at lim 6 free) free)" [ "$(at lim 6 free)" = $((512 * M)) ]
check "and they can be allocated again" [ "$(at lim 7 r)" = 0 ]
check "all freed: all free again" [ "$(at lim 10 free)" = $G ]
check "the service's account at exit: nothing reserved, limit 1 GiB" [ "$(reserved lim) $(limit lim)" = "0 $G" ]
show lim

# --- without a limit: accounted, not clamped
mem nolim -- alloc 1G info
check "without a limit cuMemGetInfo is the driver's ($(at nolim 2 total))" \
	[ "$(at nolim 2 total) $(at nolim 2 free)" = "$((4 * G)) $((3 * G))" ]
check "and the service counts what is held" [ "$(reserved nolim) $(limit nolim)" = "$G 0" ]

# --- NVML (dlopen and dlsym, as pynvml): the same, once the process uses the GPU
rm -f "$GS_DOUBLE_SHM"
mem nvml GPUSCHED_MEM_LIMIT=1G -- nvml alloc 256M nvml
check "NVML before the process used the GPU: the GPU's ($(at nvml 1 total))" \
	[ "$(at nvml 1 total)" = $((4 * G)) ]
check "nvmlDeviceGetMemoryInfo then: total the limit, free and used within it" \
	[ "$(at nvml 3 total) $(at nvml 3 free) $(at nvml 3 used)" = "$G $((768 * M)) $((256 * M))" ]
check "nvmlDeviceGetMemoryInfo_v2 the same" \
	[ "$(at nvml 3 total2) $(at nvml 3 free2) $(at nvml 3 used2)" = "$G $((768 * M)) $((256 * M))" ]
mem nvml0 -- alloc 256M nvml
check "without a limit NVML's own figures" \
	[ "$(at nvml0 2 total) $(at nvml0 2 free)" = "$((4 * G)) $((4 * G - 256 * M))" ]

# --- a percentage of the GPU; a malformed value
mem pct GPUSCHED_MEM_LIMIT=25% -- info alloc 1G alloc 1
check "GPUSCHED_MEM_LIMIT=25% of 4 GiB is 1 GiB" [ "$(at pct 1 total) $(limit pct)" = "$G $G" ]
check "and holds" [ "$(at pct 2 r) $(at pct 3 r)" = "0 2" ]
mem bad GPUSCHED_MEM_LIMIT=1GB -- info
check "a malformed limit is refused with a message" grep -q 'GPUSCHED_MEM_LIMIT="1GB" is not a size' "$T/bad.err"
check "and sets none" [ "$(limit bad)" = 0 ]

# --- every entry point, every way to reach it
for route in symbol procaddr dlsym; do
	for ptsz in "" --ptsz; do
		rm -f "$GS_DOUBLE_SHM"
		mem "r$route$ptsz" GPUSCHED_MEM_LIMIT=64M -- --route "$route" $ptsz \
			alloc 48M alloc 32M free \
			managed 48M managed 32M free \
			pitch 1000 16384 info free \
			async 48M async 32M free \
			pool 48M pool 32M free \
			create 48M create 32M free \
			info
		w="$route${ptsz:+ $ptsz}"
		check "$w: cuMemAlloc past the limit" [ "$(at "r$route$ptsz" 2 r)" = 2 ]
		check "$w: cuMemAllocManaged past the limit" [ "$(at "r$route$ptsz" 5 r)" = 2 ]
		# 16384 rows of 1000 bytes, each padded to a pitch of 1024.
		check "$w: cuMemAllocPitch counts pitch x height" \
			[ "$(at "r$route$ptsz" 7 pitch) $(at "r$route$ptsz" 8 free)" = "1024 $((64 * M - 16 * M))" ]
		check "$w: cuMemAllocAsync past the limit" [ "$(at "r$route$ptsz" 11 r)" = 2 ]
		check "$w: cuMemAllocFromPoolAsync past the limit" [ "$(at "r$route$ptsz" 14 r)" = 2 ]
		check "$w: cuMemCreate past the limit" [ "$(at "r$route$ptsz" 17 r)" = 2 ]
		check "$w: every free gave back its bytes" [ "$(at "r$route$ptsz" 19 free)" = $((64 * M)) ]
		check "$w: the driver refused nothing" [ "$(double_count mem_refused)" = 0 ]
		check "$w: five refusals logged" [ "$(refusals "r$route$ptsz")" = 5 ]
	done
done
show rprocaddr--ptsz

# --- the driver fails after the reservation: the reservation goes back
rm -f "$GS_DOUBLE_SHM"
GS_DOUBLE_MEM=256M mem drv GPUSCHED_MEM_LIMIT=1G -- alloc 200M alloc 100M
check "the driver's own refusal comes through ($(at drv 2 r))" [ "$(at drv 2 r)" = 2 ]
check "it was the driver's" [ "$(double_count mem_refused)" = 1 ]
check "and its reservation was returned: 200 MiB reserved ($(reserved drv))" [ "$(reserved drv)" = $((200 * M)) ]
check "no refusal logged for it" [ "$(refusals drv)" = 0 ]

# --- pools keep freed blocks; the reservations go back all the same
rm -f "$GS_DOUBLE_SHM"
set --
for i in 1 2 3 4 5 6 7 8; do set -- "$@" async 48M free pool 40M free; done
run_bg pool client GPUSCHED_MEM_LIMIT=64M "$GS_MEM" "$@" async 16M info \
	touch "$T/pool.ready" wait "$T/pool.go"
wait_for "$T/pool.ready"
# The 48 MiB block (holding the 16 MiB now) and the 40 MiB one, cached.
used=$(double_count mem_used)
touch "$T/pool.go"
wait_bg pool
fails=$(grep -c 'r=[1-9]' "$T/pool.out")
check "allocate and free from pools 32 times under a 64 MiB limit: no failure ($fails)" [ "$fails" = 0 ]
check "the pools keep their blocks: the double has $used bytes in use" [ "$used" = $((88 * M)) ]
check "yet only what the program holds is reserved ($(at pool 34 free) left)" \
	[ "$(at pool 34 free)" = $((48 * M)) ]
check "at exit: 16 MiB reserved" [ "$(reserved pool)" = $((16 * M)) ]
show pool
done_testing
