#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The policy's host unit tests (tests/unit/test_policy.c), plainly and
# under ASan+UBSan. Extra arguments go to both programs, e.g.
#   tests/unit/policy.t --only random --seed 42 --seeds 1
exec "$(dirname "$0")/plain-and-san.sh" test_policy "$@"
