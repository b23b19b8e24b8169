#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# GPUSCHED_MEM_LIMIT's syntax, host unit tests (tests/unit/test_memsize.c),
# plainly and under ASan+UBSan. Extra arguments go to both programs.
exec "$(dirname "$0")/plain-and-san.sh" test_memsize "$@"
