#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The library's period tracker, host unit tests (tests/unit/test_period.c),
# plainly and under ASan+UBSan. Extra arguments go to both programs, e.g.
#   tests/unit/period.t --only jitter
exec "$(dirname "$0")/plain-and-san.sh" test_period "$@"
