#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A stream captured in global mode (cudaStreamCaptureModeGlobal, the
# default, and PyTorch's) forbids every other thread in global mode the
# "potentially unsafe" calls, event queries among them: one invalidates
# the capture. The library queries its events from the application's
# launching threads and from its idle thread; it must do so in relaxed
# mode, or a program that captures graphs on one thread while another
# launches fails under it. The CUDA test double models the rule.
l=$(dirname "$0")/lib.sh; [ -r "$l" ] || l=/usr/lib/gpusched/lib.sh; . "$l"

service "$(us 5000)" 500000

# Controls, without the library: the program's captures succeed; and one
# whose other thread waits for each kernel in global mode (a probe) has
# its captures invalidated, so that the double is known to enforce the
# rule.
run_bg plain "$GS_CLIENT" --seconds 1 --kernel-us "$(us 200)" --threads 2 --capture-global
check "without the library the program's captures succeed" wait_bg plain
run_bg unsafe "$GS_CLIENT" --seconds 1 --kernel-us "$(us 200)" --threads 2 --capture-global --period-us "$(us 500)"
wait_bg unsafe
# Which thread sees the rule first is a race: the capture ends invalidated
# (901), or the wait itself is refused (900) and the client stops there.
check "a wait in global mode beside them is refused or invalidates one" \
	grep -Eq 'cuStreamEndCapture.*error 901|Synchronize\(\): error 900' "$T/unsafe.err"
show plain unsafe

# Two of them at once: token hand-overs, idle-thread polls and drains
# beside the captures.
run_bg a client "$GS_CLIENT" --seconds 2 --kernel-us "$(us 200)" --threads 2 --capture-global
run_bg b client "$GS_CLIENT" --seconds 2 --kernel-us "$(us 300)" --threads 2 --capture-global
check "under the library the captures of one process succeed" wait_bg a
check "... and of the other" wait_bg b
check "launches into the capturing stream passed untouched" grep -q 'captured=[1-9]' "$T/a.err"
show a b
done_testing
