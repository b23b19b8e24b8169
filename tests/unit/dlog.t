#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The daemon's limit on repeated log lines, host unit tests
# (tests/unit/test_dlog.c), plainly and under ASan+UBSan. Extra arguments
# go to both programs, e.g.
#   tests/unit/dlog.t --only flood
exec "$(dirname "$0")/plain-and-san.sh" test_dlog "$@"
