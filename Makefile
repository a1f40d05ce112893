# Entry points for a fresh Debian 12 machine (run as root):
#   make demo    compile an example P4 program to a DPDK executable and run traffic through it
#   make test    the test suite (pytest, through the real DPDK executables)
#   make bench   throughput against dpdk-testpmd; results in testbench/results/
# Each target first runs testbench/setup.sh, which does nothing when all is in place.

SHELL := /bin/bash
PYTHON := .venv/bin/python

.PHONY: setup test bench demo clean

setup:
	@bash testbench/setup.sh

test: setup
	$(PYTHON) -m pytest -q testbench/tests

bench: setup
	$(PYTHON) -m testbench.bench

demo: setup
	$(PYTHON) -m testbench.demo

clean:
	rm -rf build testbench/results .pytest_cache
	find t4p4s testbench -name __pycache__ -type d -prune -exec rm -rf {} +
