# Entry points for a fresh Debian 12 machine (run as root):
#   make demo    the hybrid gNB: 1 NIC + 2 host processes in network namespaces, 65,536 DRBs,
#                live offload shifts under traffic, every radio frame checked
#   make test    the test suite (pytest, through the real DPDK executables), then the
#                STF, gNB and BaaS ARQ tests again on the sanitizer build (ASan + UBSan)
#   make bench   throughput against dpdk-testpmd; results in testbench/results/
#   make fuzz    libFuzzer with ASan+UBSan on host.p4 and nic.p4, FUZZ_SECONDS each
#                (default 300); results in testbench/results/fuzz.json
#   make nic-profile  check p4src/nic.p4 against the Agilio CX profile (docs/netronome.md)
#   make nfp4build    the profile check, then Netronome's nfp4build on p4src/nic.p4 (needs the SDK)
# Each target first runs testbench/setup.sh, which does nothing when all is in place.

SHELL := /bin/bash
PYTHON := .venv/bin/python

.PHONY: setup test bench demo fuzz clean nic-profile nfp4build

setup:
	@bash testbench/setup.sh

test: setup
	$(PYTHON) -m pytest -q testbench/tests
	$(PYTHON) -m pytest -q --variant=sanitize testbench/tests/test_stf_programs.py testbench/tests/gnb \
		testbench/tests/baas/test_arq.py

bench: setup
	$(PYTHON) -m testbench.bench

demo: setup
	$(PYTHON) -m testbench.demo

FUZZ_SECONDS ?= 300
fuzz: setup
	$(PYTHON) -m testbench.fuzz --seconds $(FUZZ_SECONDS)

# The Agilio CX build (docs/netronome.md). The SDK's nfp4build is taken from
# $(NFP_SDK_DIR)/p4/bin when NFP_SDK_DIR is set, else from PATH. Defaults:
# the Agilio CX 2x40GbE of paper 001; NFP_PLATFORM/NFP_SKU select another card.
NFP_SDK_DIR ?=
NFP_PLATFORM ?= beryllium
NFP_SKU ?= AMDA0097-0001:0
NFP_OUT ?= build/nfp
NIC_P4 ?= p4src/nic.p4
NFP4BUILD = $(if $(NFP_SDK_DIR),$(NFP_SDK_DIR)/p4/bin/nfp4build,$(shell command -v nfp4build))
NFP_SDK_MISSING = $(if $(NFP_SDK_DIR),NFP_SDK_DIR=$(NFP_SDK_DIR) has no executable p4/bin/nfp4build,no nfp4build on PATH and NFP_SDK_DIR is not set)

nic-profile: setup
	$(PYTHON) -m t4p4s check --target netronome $(NIC_P4)

nfp4build: nic-profile
	@if [ -z "$(NFP4BUILD)" ] || [ ! -x "$(NFP4BUILD)" ]; then \
		echo "nfp4build: the Netronome Agilio P4 SDK is not installed ($(NFP_SDK_MISSING));" \
		     "nothing was built. Install the SDK or set NFP_SDK_DIR (docs/netronome.md)." >&2; \
		exit 1; \
	fi
	mkdir -p $(NFP_OUT)
	$(NFP4BUILD) -4 $(NIC_P4) -o $(NFP_OUT)/nic.nffw -p $(NFP_OUT)/pif \
		-l $(NFP_PLATFORM) -s $(NFP_SKU) \
		--nfp4c_p4_version 16 --nfp4c_p4_compiler p4c-nfp \
		--nfirc_default_table_size 65536 \
		--nfirc_all_header_ops --nfirc_zero_new_headers \
		--reduced-thread-usage --shared-codestore --no-debug-info

clean:
	rm -rf build testbench/results .pytest_cache
	find t4p4s testbench -name __pycache__ -type d -prune -exec rm -rf {} +
