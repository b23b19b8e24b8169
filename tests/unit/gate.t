#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The library's gate decision, host unit tests
# (tests/unit/test_gate.c), plainly and under ASan+UBSan. Extra
# arguments go to both programs, e.g.
#   tests/unit/gate.t --only idle
exec "$(dirname "$0")/plain-and-san.sh" test_gate "$@"
