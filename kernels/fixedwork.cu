// SPDX-License-Identifier: GPL-2.0
/*
 * The fixed-work kernel alone, for the driver-API client: built into a
 * fatbin (sm_90 code plus compute_90 PTX) that gs-driver-client embeds and
 * loads with cuModuleLoadData, and into a cubin it can load with --cubin.
 */
#include "fixedwork.cuh"
