/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpuschedd's default mode: the policy daemon of gpusched.ko, over the
 * generic netlink family "gpusched". See gpuschedd(8).
 */
#ifndef GSD_NLMODE_H
#define GSD_NLMODE_H

#include <stdbool.h>

/* True unless the command line asks for --arbiter (before any "--"). */
bool gs_nlmode_wanted(int argc, char **argv);

/* Parse the options of the netlink mode and run it; the exit status. */
int gs_nlmode_main(int argc, char **argv);

#endif /* GSD_NLMODE_H */
