#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# linux-source-extract.sh OUTDIR PATH...
#
# Copy files (PATHs relative to the kernel tree) out of Debian's
# linux-source-6.1 tarball into OUTDIR, flattened. Kernel files are used at
# build time only and never committed. The copy is cached: it is redone only
# when the tarball is newer than every copy.
set -eu

SRC=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
OUT=$1
shift

if [ ! -r "$SRC" ]; then
	echo "linux-source-extract: $SRC missing: run tests/tools/install-deps.sh" >&2
	exit 1
fi

stale=
for f in "$@"; do
	[ "$OUT/${f##*/}" -nt "$SRC" ] || stale=1
done
[ -z "$stale" ] && exit 0

# The tarball holds one top directory, named after the version.
top=$(tar -tJf "$SRC" | head -n 1)
top=${top%%/*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
members=
for f in "$@"; do
	members="$members $top/$f"
done
# shellcheck disable=SC2086 # one word per member
tar -xJf "$SRC" -C "$tmp" $members
mkdir -p "$OUT"
for f in "$@"; do
	# cp -p would keep the kernel's old mtime and defeat the cache test.
	cp "$tmp/$top/$f" "$OUT/${f##*/}"
done
