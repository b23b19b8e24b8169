#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build-debs.sh OUTDIR: build the Debian packages (dpkg-buildpackage -b -us
# -uc) from a copy of the tree in OUTDIR/gpusched-VERSION, so that the
# build's outputs, and the .debs dpkg writes next to the copy, stay in
# OUTDIR and edits made meanwhile in the tree do not reach the build.
# The copy: what git tracks plus untracked files it does not ignore, or,
# outside a git checkout, everything but build/.
set -eu

out=${1:?usage: build-debs.sh OUTDIR}
cd "$(dirname "$0")/.."
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/gpusched-$version
rm -rf "$src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -c -o --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -C "$src" -xf -
else
	tar --exclude=./build -cf - . | tar -C "$src" -xf -
fi
cd "$src"
dpkg-buildpackage -b -us -uc
ls "$out"/*.deb
