#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The in-VM tests on the installed Debian 6.1 kernel.
exec "$(dirname "$0")/run.sh" 6.1
