#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# extract-kselftest.sh [OUTDIR]
#
# The kselftest harness for tests/kselftest/*.c, taken from linux-source-6.1
# into OUTDIR (default build/kselftest).
set -eu

exec "$(dirname "$0")/linux-source-extract.sh" "${1:-build/kselftest}" \
	tools/testing/selftests/kselftest_harness.h \
	tools/testing/selftests/kselftest.h
