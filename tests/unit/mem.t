#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Device memory accounting's host unit tests (tests/unit/test_mem.c),
# plainly and under ASan+UBSan.
exec "$(dirname "$0")/plain-and-san.sh" test_mem "$@"
