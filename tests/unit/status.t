#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The status pages and the policy's effects (kmod/status.c), as both token
# services tell them: host unit tests, plainly and under ASan+UBSan.
exec "$(dirname "$0")/plain-and-san.sh" test_status "$@"
