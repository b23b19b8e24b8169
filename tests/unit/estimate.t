#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The library's launch-length arithmetic, host unit tests
# (tests/unit/test_estimate.c), plainly and under ASan+UBSan. Extra
# arguments go to both programs, e.g.
#   tests/unit/estimate.t --only keys
exec "$(dirname "$0")/plain-and-san.sh" test_estimate "$@"
