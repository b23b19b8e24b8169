#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages: `make deb`'s script builds them (dpkg-buildpackage
# -b -us -uc, from a copy of the tree under /tmp), lintian finds no error,
# apt installs them, and then the installed files work: pkg-config, a
# program of the explicit API compiled and run against them, gpuschedctl,
# gpusched-cdi, the systemd unit (systemd-analyze verify), DKMS holding the
# module's source, the SPANK plugin bound to the Slurm series it was built
# against; gpuschedd's maintainer scripts restart it on upgrade and
# stop it on removal. apt remove leaves nothing but conffiles; purge,
# nothing, nor the CDI spec gpusched-cdi wrote at its default path.
# Root, like CI.
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/tap.sh

PKGS="gpusched-dkms libgpusched1 libgpusched-dev gpusched gpusched-slurm"
[ "$(id -u)" = 0 ] || skip_all "needs root (installs packages)"
for t in dpkg-buildpackage dh lintian dkms; do
	command -v $t >/dev/null || skip_all "no $t: run tests/tools/install-deps.sh"
done
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		skip_all "$p is installed on this machine; this test would replace it"
	fi
done

T=$(mktemp -d /tmp/gs-deb.XXXXXX)
cleanup() {
	# shellcheck disable=SC2086 # a list of packages
	dpkg --purge $PKGS >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
check "debian/changelog's version is dkms.conf's, $VERSION" \
	test "$(dpkg-parsechangelog -S Version | sed 's/-[^-]*$//')" = "$VERSION"

if ! check "dpkg-buildpackage -b -us -uc (debian/build-debs.sh)" \
	sh -c "debian/build-debs.sh '$T' >'$T/build.log' 2>&1"; then
	diag_file "$T/build.log"
	done_testing
	exit
fi
for p in $PKGS; do
	check "built $p" ls "$T/${p}_$VERSION"_*.deb
done
check "and nothing else: $(cd "$T" && echo *.deb)" test "$(ls "$T"/*.deb | wc -l)" = 5

lintian --fail-on error --tag-display-limit 0 "$T"/*.changes >"$T/lintian.log" 2>&1
check "lintian: no errors ($(grep -c '^E:' "$T/lintian.log") E, $(grep -c '^W:' "$T/lintian.log") W)" \
	not grep -q '^E:' "$T/lintian.log"
diag_file "$T/lintian.log" 40

# gpuschedd across upgrades and removal (the scripts dh_installsystemd
# writes, read from the package): an upgrade restarts it if it runs and
# does not stop it beforehand; a removal stops it.
dpkg-deb -e "$T/gpusched_${VERSION}"_*.deb "$T/ctl"
check "postinst try-restarts gpuschedd on upgrade" grep -q 'deb-systemd-invoke try-restart .gpuschedd.service' "$T/ctl/postinst"
check "preinst does not stop it for an upgrade" not grep -qs 'stop gpuschedd' "$T/ctl/preinst"
check "prerm stops it on removal" grep -q 'deb-systemd-invoke stop gpuschedd.service' "$T/ctl/prerm"

# The SPANK plugin loads only in the Slurm series it was built against:
# its package takes Slurm's plugins of that series (what slurmd and
# slurm-client require at their own version), and no other.
dep=$(dpkg-deb -f "$T/gpusched-slurm_${VERSION}"_*.deb Depends)
echo "gpusched-slurm: Depends: $dep" | diag
# slurm_ok VERSION: Slurm's plugins at VERSION meet both of its bounds.
slurm_ok() {
	printf '%s\n' "$dep" | tr ',' '\n' |
		sed -n 's/.*slurm-wlm-basic-plugins (\([<>=]*\) \(.*\)).*/\1 \2/p' | {
		n=0
		while read -r op v; do
			dpkg --compare-versions "$1" "$op" "$v" || exit 1
			n=$((n + 1))
		done
		[ "$n" = 2 ]
	}
}
sv=$(dpkg-query -W -f='${Version}' libslurm-dev)
major=${sv%%.*}
check "gpusched-slurm takes the Slurm it was built against, $sv" slurm_ok "$sv"
check "and not the next series, $((major + 1)).02.1-1" not slurm_ok "$((major + 1)).02.1-1"
check "nor the one before, $((major - 1)).11.9-1" not slurm_ok "$((major - 1)).11.9-1"

# dkms builds the module for the running kernel at install, where it can:
# not in CI (no headers for the host's kernel); -k builds are dkms.t's.
debs=$(for p in $PKGS; do ls "$T/${p}_${VERSION}"_*.deb; done)
# shellcheck disable=SC2086 # a list of files
if ! check "apt-get install ./*.deb" \
	sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(echo $debs) >'$T/install.log' 2>&1"; then
	diag_file "$T/install.log"
	done_testing
	exit
fi

grep -E -i 'dkms|building|signing' "$T/install.log" | head -n 20 | diag
check "the packaged library needs no glibc above 2.28 (glibc-baseline.t)" \
	tests/pkg/glibc-baseline.t "$(dpkg -L libgpusched1 | grep '/libgpusched.so.1$')"

check "pkg-config --cflags --libs libgpusched says -lgpusched" \
	sh -c "pkg-config --cflags --libs libgpusched | grep -q -- -lgpusched"
check "pkg-config --modversion libgpusched is $VERSION" \
	test "$(pkg-config --modversion libgpusched)" = "$VERSION"

cat >"$T/api.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <gpusched.h>
#include <linux/gpusched.h>

int main(void)
{
	/* No token service here: what matters is that it links and runs. */
	const char *s = gpusched_strerror(-EPERM);

	printf("%s (weights %d..%d)\n", s, GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX);
	return strcmp(s, "Operation not permitted") != 0;
}
EOF
check "an explicit-API program compiles against the installed files" \
	sh -c "cc -std=gnu11 -Wall -Werror -o '$T/api' '$T/api.c' \$(pkg-config --cflags --libs libgpusched)"
check "and runs: gpusched_strerror(-EPERM) from the installed library" "$T/api"
check "it loads the packaged libgpusched.so.1" \
	sh -c "ldd '$T/api' | grep -q -- '-linux-gnu/libgpusched.so.1'"
check "gpuschedctl --help" gpuschedctl --help
check "gpuschedd --help" gpuschedd --help
check "gpusched-run --help" gpusched-run --help
check "gpusched-cdi finds the installed library" \
	sh -c "gpusched-cdi --mode kmod -o - | grep -q 'hostPath: /usr/lib/.*/libgpusched.so.1'"
check "systemd-analyze verify gpuschedd.service" \
	systemd-analyze verify /lib/systemd/system/gpuschedd.service
# The reload's check reads the file the daemon reads: a drop-in's options
# reach both. Its command line expanded as systemd does ($VAR: split into
# words), with a broken file named there.
unit=/lib/systemd/system/gpuschedd.service
printf 'weight = \n' >"$T/broken.conf"
reload=$(sed -n 's/^ExecReload=\(.*gpuschedd --check.*\)/\1/p' "$unit")
reload=$(printf '%s\n' "$reload" | sed "s|\\\$GPUSCHEDD_OPTS|--config $T/broken.conf|")
check "the reload's check reads the file a drop-in names ($reload)" \
	sh -c "$reload; [ \$? = 1 ]"
check "the SPANK plugin is gpusched-slurm's" \
	sh -c "dpkg -S '/usr/lib/*/gpusched/spank_gpusched.so' | grep -q '^gpusched-slurm:'"
check "man pages: gpuschedd(8) is installed" test -e /usr/share/man/man8/gpuschedd.8.gz
check "DKMS holds the module's source: dkms status gpusched/$VERSION" \
	sh -c "dkms status gpusched/$VERSION | grep -q gpusched"

# A CDI spec that gpusched-cdi wrote at its default path goes with a purge.
cdi_spec=/etc/cdi/gpusched.yaml
cdi_ours=
if [ -e "$cdi_spec" ]; then
	skip "the CDI spec gpusched-cdi writes goes with a purge" "$cdi_spec exists on this machine"
elif check "gpusched-cdi writes $cdi_spec" sh -c "gpusched-cdi --mode kmod >/dev/null"; then
	cdi_ours=1
fi

# What the packages own, and which of it are conffiles, before removal.
for p in $PKGS; do dpkg -L "$p"; done | sort -u >"$T/files"
for p in $PKGS; do dpkg-query -W -f='${Conffiles}\n' "$p"; done |
	awk 'NF { print $1 }' | sort -u >"$T/conffiles"
# shellcheck disable=SC2086 # a list of packages
check "apt-get remove" sh -c "DEBIAN_FRONTEND=noninteractive apt-get remove -y $PKGS >'$T/remove.log' 2>&1"
left=$(while read -r f; do
	[ -d "$f" ] && continue
	grep -qxF "$f" "$T/conffiles" && continue
	[ -e "$f" ] || [ -L "$f" ] && echo "$f"
done <"$T/files")
check "nothing left after remove but conffiles${left:+: $(echo $left)}" test -z "$left"
left=$(ls -d /usr/src/gpusched-* /var/lib/dkms/gpusched /lib/modules/*/updates/dkms/gpusched.ko* 2>/dev/null)
check "nothing of DKMS's left${left:+: $(echo $left)}" test -z "$left"
check "the conffiles stay: $(echo $(cat "$T/conffiles"))" \
	sh -c "for f in \$(cat '$T/conffiles'); do test -e \$f || exit 1; done"
# shellcheck disable=SC2086 # a list of packages
check "dpkg --purge" dpkg --purge $PKGS
left=$(for f in $(cat "$T/conffiles"); do [ -e "$f" ] && echo "$f"; done)
check "nothing left after purge${left:+: $(echo $left)}" test -z "$left"
if [ -n "$cdi_ours" ]; then
	check "nor the CDI spec gpusched-cdi wrote" not test -e "$cdi_spec"
	rm -f "$cdi_spec"
fi
done_testing
