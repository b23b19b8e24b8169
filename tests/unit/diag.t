#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# GPUSCHED_DEBUG's syntax, host unit tests (tests/unit/test_diag.c),
# plainly and under ASan+UBSan. Extra arguments go to both programs.
exec "$(dirname "$0")/plain-and-san.sh" test_diag "$@"
