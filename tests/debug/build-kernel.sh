#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [NAME]
#
# Build the debug kernel NAME (default debug; also kcsan) of
# tests/debug/base.config and tests/debug/NAME.config from Debian's
# linux-source-6.1 (extracted here, never committed) and print the
# directory that holds it: DIR/bzImage, and DIR/linux, the built tree to
# build modules against (KDIR). The build is cached in
# build/NAME-kernel/KEY/, KEY a hash of the config fragments, the source
# tarball, the compiler and this script, so a second run prints at once.
# When only the fragment (or this script) changed, the previous tree is
# reconfigured and rebuilt incrementally instead of extracted again: kbuild
# recompiles what the changed options reach.
# Progress and the build log go to standard error and DIR/build.log.
#
# Environment: LINUX_SOURCE (default /usr/src/linux-source-6.1.tar.xz),
# JOBS (default: the number of CPUs), NICE (default 10).
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
SRC=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
NAME=${1:-debug}
BASE=$ROOT/tests/debug/base.config
FRAG=$ROOT/tests/debug/$NAME.config
JOBS=${JOBS:-$(nproc)}
NICE=${NICE:-10}
CACHE=$ROOT/build/$NAME-kernel

log() {
	echo "$NAME-kernel: $*" >&2
}

case $NAME in
base | */* | '') log "no such kernel: $NAME"; exit 1 ;;
esac
if [ ! -r "$FRAG" ]; then
	log "no tests/debug/$NAME.config"
	exit 1
fi

if [ ! -r "$SRC" ]; then
	log "$SRC missing: run tests/tools/install-deps.sh"
	exit 1
fi
for tool in bison flex bc; do
	command -v $tool >/dev/null || { log "$tool missing: run tests/tools/install-deps.sh"; exit 1; }
done

SOURCE_ID="$(stat -c '%n %s %Y' "$SRC") $(gcc --version | head -n 1)"
KEY=$( {
	cat "$BASE" "$FRAG" "$0"
	echo "$SOURCE_ID"
} | sha256sum | cut -c1-16)
DIR=$CACHE/$KEY
mkdir -p "$CACHE"

# One build at a time; a second caller waits and then finds it cached.
exec 9>"$CACHE/.lock"
flock 9

if [ -f "$DIR/done" ]; then
	log "cached: build/$NAME-kernel/$KEY"
	echo "$DIR"
	exit 0
fi

rm -rf "$DIR"
mkdir -p "$DIR"
start=$(date +%s)
K=$DIR/linux

# Only the newest configuration is worth the disk (a few GB each); the
# tree of an older one, from the same source and compiler, is reused.
for old in "$CACHE"/*/; do
	old=${old%/}
	[ -d "$old" ] && [ "$old" != "$DIR" ] || continue
	if [ ! -d "$K" ] && [ -d "$old/linux" ] &&
	   [ "$(cat "$old/source" 2>/dev/null)" = "$SOURCE_ID" ]; then
		log "reusing the tree of build/$NAME-kernel/${old##*/}"
		mv "$old/linux" "$K"
	fi
	rm -rf "$old"
done
if [ ! -d "$K" ]; then
	log "extracting $SRC"
	# The tarball holds one top directory (tar dies of SIGPIPE here: fine).
	top=$(tar -tJf "$SRC" 2>/dev/null | head -n 1 || true)
	top=${top%%/*}
	nice -n "$NICE" tar -xJf "$SRC" -C "$DIR"
	mv "$DIR/$top" "$K"
fi
echo "$SOURCE_ID" >"$DIR/source"
extracted=$(date +%s)

log "configuring (tinyconfig + tests/debug/base.config + tests/debug/$NAME.config)"
{
	make -C "$K" ARCH=x86_64 tinyconfig
	"$K/scripts/kconfig/merge_config.sh" -m -O "$K" "$K/.config" "$BASE" "$FRAG"
	make -C "$K" ARCH=x86_64 olddefconfig
} >"$DIR/build.log" 2>&1

# Kconfig drops silently what a missing dependency forbids: check every line.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n)
		opt=${line%=n}
		if grep -q "^$opt=" "$K/.config"; then
			log "wanted $line, got $(grep "^$opt=" "$K/.config")"
			bad=1
		fi
		;;
	CONFIG_*=*)
		if ! grep -qx "$line" "$K/.config"; then
			log "wanted $line, got $(grep "^${line%%=*}[= ]" "$K/.config" || echo 'not set')"
			bad=1
		fi
		;;
	esac
done < <(cat "$BASE" "$FRAG")
if [ $bad -ne 0 ]; then
	log "configuration does not hold the fragment; see $K/.config"
	exit 1
fi

log "building bzImage and modules with make -j$JOBS (nice $NICE); log in $DIR/build.log"
if ! nice -n "$NICE" make -C "$K" ARCH=x86_64 -j"$JOBS" bzImage modules \
	>>"$DIR/build.log" 2>&1; then
	tail -n 30 "$DIR/build.log" >&2
	log "build failed"
	exit 1
fi
ln -sf linux/arch/x86/boot/bzImage "$DIR/bzImage"
end=$(date +%s)
printf 'extract %d s, build %d s\n' $((extracted - start)) $((end - extracted)) >"$DIR/time"
log "built in $((end - start)) s ($(cat "$DIR/time"))"
touch "$DIR/done"
echo "$DIR"
