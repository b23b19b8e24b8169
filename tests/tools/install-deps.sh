#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages that building and testing gpusched needs.
# Idempotent: asks dpkg first and touches apt only when something is missing,
# so `make check` can call it every time at no cost.
#
# Add a package here, in one place, when a new part of the tree needs it.
set -eu

PACKAGES="
	build-essential
	perl
	pkg-config
	cpio
	sparse
	libnl-genl-3-dev
	libnl-utils
	gnuplot-nox
	linux-image-amd64
	linux-headers-amd64
	linux-image-6.12-amd64
	linux-headers-6.12-amd64
	linux-source-6.1
	qemu-system-x86
	busybox-static
	linux-source-6.12
	python3-yaml
	python3-jsonschema
	valgrind
	clang
	libclang-rt-14-dev
	bison
	flex
	bc
	libelf-dev
	dkms
	dh-dkms
	debhelper
	lintian
	podman
	runc
	munge
	slurmctld
	slurmd
	slurm-client
	libslurm-dev
"

missing=
for pkg in $PACKAGES; do
	# "install ok installed" is the only state in which the files are there.
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing="$missing $pkg"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages; as root run:" >&2
	echo "  apt-get install$missing" >&2
	exit 1
fi

echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086 # one word per package
apt-get install -y -q --no-install-recommends $missing
