#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.sh [FILE...]
#
# Run the kernel's checkpatch.pl (from linux-source-6.1, extracted into
# build/checkpatch) over the module sources, or over FILEs (relative to the
# top directory). Fails on any ERROR or WARNING.
set -eu

cd "$(dirname "$0")/../.."
OUT=build/checkpatch

# checkpatch finds spelling.txt and const_structs.checkpatch next to itself.
tests/tools/linux-source-extract.sh "$OUT" \
	scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch

if [ $# -eq 0 ]; then
	set -- kmod/*.c kmod/*.h kmod/uapi/linux/gpusched.h
fi
for f in "$@"; do
	[ -e "$f" ] || { echo "checkpatch: $f does not exist" >&2; exit 1; }
done

# --no-tree: we are not in a kernel tree; -f: whole files, not patches.
# No --strict: its CHECKs flag the plain-C types that kmod/policy.c must use
# to compile in user space too. Without it checkpatch exits non-zero exactly
# when it reports an ERROR or a WARNING.
exec perl "$OUT/checkpatch.pl" --no-tree -f --terse --showfile --no-summary "$@"
