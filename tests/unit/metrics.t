#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gpuschedd's metrics, host tests (tests/unit/test_metrics.c): the text
# format and the HTTP server on loopback; then under valgrind. Builds it
# if needed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$top" || exit 1
bin=build/tests/unit/test_metrics

make -s "$bin" >&2 || { echo "Bail out! cannot build $bin"; exit 1; }
exec tests/netlink/tap-valgrind.sh "$bin" "$@"
