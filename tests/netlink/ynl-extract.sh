#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ynl-extract.sh [OUTDIR]
#
# The kernel's generic YNL tools (tools/net/ynl: cli.py, ynl-gen-c.py and
# their lib/) and the netlink spec schemas (Documentation/netlink/*.yaml)
# from Debian's linux-source-6.12, into OUTDIR (default build/ynl) with the
# kernel's own layout, so that cli.py finds the schema next to a spec in
# OUTDIR/Documentation/netlink/specs/. Build time only: kernel files are
# never committed. Redone only when the tarball is newer than the copy.
set -eu

SRC=${LINUX_SOURCE_6_12:-/usr/src/linux-source-6.12.tar.xz}
OUT=${1:-build/ynl}
STAMP=$OUT/.extracted

if [ ! -r "$SRC" ]; then
	echo "ynl-extract: $SRC missing: apt-get install linux-source-6.12" >&2
	exit 1
fi
[ -f "$STAMP" ] && [ "$STAMP" -nt "$SRC" ] && exit 0

top=$(tar -tJf "$SRC" | head -n 1)
top=${top%%/*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$SRC" -C "$tmp" --wildcards --no-wildcards-match-slash \
	"$top/tools/net/ynl/cli.py" "$top/tools/net/ynl/ynl-gen-c.py" \
	"$top/tools/net/ynl/lib/*.py" "$top/Documentation/netlink/*.yaml"
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r "$tmp/$top/tools" "$tmp/$top/Documentation" "$OUT/"
# ynl-gen-c.py finds the kernel's root by its MAINTAINERS file.
echo "# Marks the root of the extracted kernel files for ynl-gen-c.py." >"$OUT/MAINTAINERS"
touch "$STAMP"
