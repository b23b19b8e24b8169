#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms.conf: `make install-dkms` puts the module's source in
# /usr/src/gpusched-VERSION, as the gpusched-dkms package does; DKMS adds
# it, builds and installs it for each installed Debian kernel that has its
# headers (6.1 and 6.12 on CI), naming each with -k (none of them is the
# running kernel), and skips a kernel older than 6.1; the 6.1 module DKMS
# installed is then the one a VM run loads (tests/vm/run.sh with VM_KO)
# for a few in-VM tests; and `dkms remove` takes everything away again.
# Root, like CI.
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/tap.sh

[ "$(id -u)" = 0 ] || skip_all "needs root (dkms installs under /lib/modules)"
command -v dkms >/dev/null || skip_all "no dkms: run tests/tools/install-deps.sh"

VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
MOD=gpusched/$VERSION
if [ -n "$(dkms status gpusched 2>/dev/null)" ] || [ -e "/usr/src/gpusched-$VERSION" ]; then
	skip_all "gpusched is in DKMS already on this machine (the gpusched-dkms package?); this test would replace it"
fi

# Each Debian kernel series' newest kernel with headers (as tests/vm/run.sh).
KVERS=
for series in 6.1 6.12; do
	k=
	for img in $(printf '%s\n' /boot/vmlinuz-"$series".* | sort -V); do
		v=${img#/boot/vmlinuz-}
		[ -e "/lib/modules/$v/build/Makefile" ] && k=$v
	done
	[ -n "$k" ] && KVERS="$KVERS $k"
done
[ -n "$KVERS" ] || skip_all "no Debian 6.1 or 6.12 kernel with headers: run tests/tools/install-deps.sh"
RUNNING=$(uname -r)

cleanup() {
	dkms remove "$MOD" --all >/dev/null 2>&1
	rm -rf "/usr/src/gpusched-$VERSION"
}
trap cleanup EXIT

check "nothing under the build tree's control uses uname -r" \
	not grep -n 'uname' dkms.conf Kbuild

tmp=$(mktemp -d)
check "make install-dkms puts the source in /usr/src/gpusched-$VERSION" \
	make -s install-dkms DESTDIR=
check "dkms add $MOD" dkms add "$MOD"

# A kernel older than 6.1 is not the module's (BUILD_EXCLUSIVE_KERNEL):
# DKMS skips it with its own status, 77, before looking for its headers,
# where a build would fail and take the package's installation with it.
old=5.10.0-30-amd64
dkms build -k "$old" "$MOD" >"$tmp/old.log" 2>&1
rc=$?
check "dkms build -k $old: skipped, status 77 (got $rc)" test "$rc" = 77
check "... saying that the module is not for that kernel" \
	grep -q 'BUILD_EXCLUSIVE' "$tmp/old.log"
diag_file "$tmp/old.log"

for k in $KVERS; do
	if ! check "dkms build -k $k $MOD" dkms build -k "$k" "$MOD"; then
		diag_file "/var/lib/dkms/gpusched/$VERSION/build/make.log"
		continue
	fi
	log=/var/lib/dkms/gpusched/$VERSION/$k/$(uname -m)/log/make.log
	# The build for kernel $k named $k, and never the running kernel.
	if [ "$RUNNING" != "$k" ]; then
		check "the build log for $k never names the running kernel, $RUNNING" \
			not grep -F "$RUNNING" "$log"
	fi
	check "dkms install -k $k $MOD" dkms install -k "$k" "$MOD"
	ko=/lib/modules/$k/updates/dkms/gpusched.ko
	[ -e "$ko" ] || ko=$ko.xz
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	check "$ko is installed, built for $k (vermagic: ${vermagic%% *})" \
		test "${vermagic%% *}" = "$k"
	check "depmod knows it: modinfo -k $k gpusched finds $ko" \
		sh -c "modinfo -k '$k' -F filename gpusched | grep -qx '$ko'"
	check "its version is the tree's, $VERSION" \
		test "$(modinfo -F version "$ko" 2>/dev/null)" = "$VERSION"
done
check "dkms status: installed for every kernel" \
	sh -c "[ \$(dkms status '$MOD' | grep -c ': installed') = $(echo $KVERS | wc -w) ]"

# The DKMS-built module in the VM: the 6.1 kernel, a few programs.
k61=
for k in $KVERS; do case $k in 6.1.*) k61=$k ;; esac; done
bins="build/kselftest/bin/basics build/kselftest/bin/exclusion build/kselftest/bin/badinput"
if [ -z "$k61" ]; then
	skip "the DKMS module in a VM" "no 6.1 kernel with headers"
elif ! ls $bins >/dev/null 2>&1; then
	skip "the DKMS module in a VM" "no in-VM test programs: make vm-tests"
else
	VM_KO=$(ls /lib/modules/"$k61"/updates/dkms/gpusched.ko*) VM_TESTS=$bins VM_EXTRA= \
		tests/vm/run.sh 6.1 >"$tmp/vm.tap" 2>&1
	vm_rc=$?
	check "the VM run loads DKMS's module and passes ($(grep -c '^ok' "$tmp/vm.tap") ok, $(grep -c '^not ok' "$tmp/vm.tap") not ok)" \
		test "$vm_rc" = 0
	diag_file "$tmp/vm.tap"
fi

check "dkms remove $MOD --all" dkms remove "$MOD" --all
left=$(ls /lib/modules/*/updates/dkms/gpusched.ko* /var/lib/dkms/gpusched 2>/dev/null)
check "nothing of the module is left under /lib/modules or /var/lib/dkms${left:+: $left}" \
	test -z "$left"
rm -rf "$tmp"
done_testing
