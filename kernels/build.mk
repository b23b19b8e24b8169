# SPDX-License-Identifier: GPL-2.0
#
# kernels/: CUDA programs for tests and benchmarks: the fixed-work kernel,
# the driver-API and runtime-API clients, the latency probe and what an
# event costs (gs-event-cost). Included by
# the top Makefile (B, Q, CC, USER_CFLAGS come from there).
#
# Built only where nvcc is found: on PATH, else /usr/local/cuda/bin/nvcc;
# NVCC=/path/to/nvcc picks one, NVCC= turns the CUDA programs off. CI has no
# CUDA: there `make user` leaves them out and `make kernels` says so.
# CUDA_HOME defaults to the directory above nvcc's bin/.

ifeq ($(origin NVCC),undefined)
NVCC := $(firstword $(shell command -v nvcc 2>/dev/null) \
	$(wildcard /usr/local/cuda/bin/nvcc))
endif

KERNELS_OUT := $(B)/kernels
KERNELS_PROGS := $(KERNELS_OUT)/gs-driver-client \
	$(KERNELS_OUT)/gs-runtime-client $(KERNELS_OUT)/gs-probe \
	$(KERNELS_OUT)/gs-event-cost
KERNELS_FILES := $(KERNELS_PROGS) $(KERNELS_OUT)/fixedwork.cubin

.PHONY: kernels

ifneq ($(strip $(NVCC)),)

CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(realpath $(NVCC))))
KERNELS_BIN2C := $(dir $(realpath $(NVCC)))bin2c
KERNELS_STUBS := $(firstword $(wildcard $(CUDA_HOME)/lib64/stubs \
	$(CUDA_HOME)/targets/x86_64-linux/lib/stubs $(CUDA_HOME)/lib/stubs))

# Hopper (H100/H200) machine code plus PTX, so a newer GPU JIT-compiles it.
KERNELS_GENCODE := -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3
KERNELS_NVFLAGS := $(NVCCFLAGS) -std=c++17 $(KERNELS_GENCODE) \
	-Xcompiler -Wall -Ikernels
KERNELS_CFLAGS := $(USER_CFLAGS) -Ikernels -I$(KERNELS_OUT) \
	-I$(CUDA_HOME)/include

# Quiet build: "  NVCC    build/kernels/gs-probe".
kernels_say = $(if $(Q),@printf '  %-8s%s\n' '$(1)' '$(2)')

USER_TARGETS += $(KERNELS_FILES)
kernels: $(KERNELS_FILES)

$(KERNELS_OUT)/gs-common.o: kernels/gs-common.c kernels/gs-common.h
	$(call kernels_say,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(KERNELS_CFLAGS) -c -o $@ $<

$(KERNELS_OUT)/fixedwork.fatbin: kernels/fixedwork.cu kernels/fixedwork.cuh \
		kernels/fixedwork.h
	$(call kernels_say,FATBIN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(KERNELS_NVFLAGS) -fatbin -o $@ $<

$(KERNELS_OUT)/fixedwork.cubin: kernels/fixedwork.cu kernels/fixedwork.cuh \
		kernels/fixedwork.h
	$(call kernels_say,CUBIN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVCCFLAGS) -gencode arch=compute_90,code=sm_90 -cubin \
		-o $@ $<

$(KERNELS_OUT)/fixedwork_fatbin.h: $(KERNELS_OUT)/fixedwork.fatbin
	$(call kernels_say,BIN2C,$@)
	$(Q)$(KERNELS_BIN2C) -c -t longlong -n gs_fixedwork_fatbin $< > $@.tmp
	$(Q)mv $@.tmp $@

$(KERNELS_OUT)/gs-driver-client $(KERNELS_OUT)/gs-event-cost: \
		$(KERNELS_OUT)/%: kernels/%.c \
		$(KERNELS_OUT)/fixedwork_fatbin.h $(KERNELS_OUT)/gs-common.o \
		kernels/gs-common.h kernels/cu-check.h kernels/fixedwork.h
	$(call kernels_say,CCLD,$@)
	$(Q)$(CC) $(KERNELS_CFLAGS) -o $@ $< $(KERNELS_OUT)/gs-common.o \
		$(addprefix -L,$(KERNELS_STUBS)) -lcuda -lm -pthread

$(KERNELS_OUT)/gs-runtime-client $(KERNELS_OUT)/gs-probe: \
		$(KERNELS_OUT)/%: kernels/%.cu kernels/rt-backend.cuh \
		kernels/fixedwork.cuh kernels/fixedwork.h kernels/gs-common.h \
		$(KERNELS_OUT)/gs-common.o
	$(call kernels_say,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(KERNELS_NVFLAGS) -o $@ $< $(KERNELS_OUT)/gs-common.o -lm -lpthread

else

kernels:
	@echo "kernels: nvcc not found (set NVCC=/path/to/nvcc); CUDA programs skipped"

endif
