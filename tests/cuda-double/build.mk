# SPDX-License-Identifier: GPL-2.0
#
# The CUDA test double (tests only, never installed) and its client.

GSDBL_DIR := $(B)/tests/cuda-double
GSDBL_LIB := $(GSDBL_DIR)/libcuda.so.1
GSDBL_CLIENT := $(GSDBL_DIR)/gs-cuda-client
GSDBL_MEM := $(GSDBL_DIR)/gs-mem-client
GSDBL_NVML := $(GSDBL_DIR)/libnvidia-ml.so.1
GSDBL_HDRS := tests/cuda-double/cuda_double.h libgpusched/cuda_abi.h

# -Bsymbolic: like libcuda, the double hands out its own entry points from
# cuGetProcAddress even when libgpusched is preloaded in front of it.
$(GSDBL_LIB): tests/cuda-double/cuda_double.c $(GSDBL_HDRS)
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Itests/cuda-double -fPIC \
		-fvisibility=hidden -pthread -shared -Wl,-soname,libcuda.so.1 \
		-Wl,-Bsymbolic -Wl,-z,defs -o $@ $< -ldl
	$(Q)ln -sf libcuda.so.1 $(@D)/libcuda.so

# RUNPATH $ORIGIN: the client finds the double next to it.
$(GSDBL_CLIENT): tests/cuda-double/gs-cuda-client.c $(GSDBL_HDRS) $(GSDBL_LIB)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Itests/cuda-double -pthread \
		-o $@ $< -L$(GSDBL_DIR) -lcuda -ldl -Wl,-rpath,'$$ORIGIN'

# NVML's double: libgpusched's clamping of nvmlDeviceGetMemoryInfo.
$(GSDBL_NVML): tests/cuda-double/nvml_double.c tests/cuda-double/cuda_double.h
	$(Q)mkdir -p $(@D)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Itests/cuda-double -fPIC \
		-fvisibility=hidden -shared -Wl,-soname,libnvidia-ml.so.1 \
		-Wl,-z,defs -o $@ $<

$(GSDBL_MEM): tests/cuda-double/gs-mem-client.c $(GSDBL_HDRS) $(GSDBL_LIB)
	$(call gs_msg,CCLD,$@)$(CC) $(USER_CFLAGS) -Itests/cuda-double -pthread \
		-o $@ $< -L$(GSDBL_DIR) -lcuda -ldl -Wl,-rpath,'$$ORIGIN'

USER_TARGETS += $(GSDBL_LIB) $(GSDBL_CLIENT) $(GSDBL_MEM) $(GSDBL_NVML)
