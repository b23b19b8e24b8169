#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The YNL spec of the netlink family, Documentation/netlink/specs/
# gpusched.yaml, against the kernel's schema and generator (from
# linux-source-6.12, extracted into build/ynl) and against the uAPI header
# and the knob table's ranges (kmod/policy.c). See tests/netlink/ynl-spec-check.py.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$top" || exit 1
# Debian's interpreter, whose python3-yaml and python3-jsonschema the
# kernel's tools need (a python3 earlier in PATH may lack them).
PYTHON=${PYTHON:-/usr/bin/python3}

tests/netlink/ynl-extract.sh build/ynl >&2 || {
	echo "Bail out! cannot extract tools/net/ynl from linux-source-6.12"
	exit 1
}
for m in yaml jsonschema; do
	"$PYTHON" -c "import $m" 2>/dev/null || {
		echo "Bail out! $PYTHON lacks the $m module: apt-get install python3-yaml python3-jsonschema"
		exit 1
	}
done
exec "$PYTHON" tests/netlink/ynl-spec-check.py build/ynl \
	Documentation/netlink/specs/gpusched.yaml kmod/uapi \
	-D_GNU_SOURCE -Ikmod/uapi -Ikmod -Iinclude kmod/policy.c kmod/mem.c
