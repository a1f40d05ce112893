#!/usr/bin/env bash
# Prepares a Debian 12 machine (as root) to build, test and benchmark the
# project: apt packages, the Python venv (.venv) and 2 MB hugepages.
# Idempotent and quick when everything is already in place; says what it did.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO_ROOT/.venv"
REQUIREMENTS="$REPO_ROOT/requirements.txt"
REQUIREMENTS_STAMP="$VENV/.requirements.sha256"
HUGEPAGES_WANTED=512
HUGEPAGES_MOUNT=/dev/hugepages

APT_PACKAGES=(
	# build the compiled pipelines (the runtime links DPDK, libpcap, jansson)
	gcc make cpp pkg-config
	dpdk dpdk-dev libdpdk-dev libpcap-dev libjansson-dev
	# tests: veth pairs, namespaces, optional captures
	iproute2 tcpdump
	# Python venv for the compiler, tests and benchmarks
	python3 python3-venv python3-pip
	# the P4Runtime server
	libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
	# the sanitizer build (gcc's libasan, libubsan come with gcc) and the fuzz
	# harness: clang with its sanitizer and libFuzzer runtimes (libclang-rt),
	# llvm-symbolizer for readable reports
	clang libclang-rt-14-dev llvm-14
)

say() { printf 'setup: %s\n' "$*"; }

missing_apt_packages() {
	local package
	for package in "${APT_PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
			printf '%s\n' "$package"
		fi
	done
}

install_apt_packages() {
	local missing
	mapfile -t missing < <(missing_apt_packages)
	if ((${#missing[@]} == 0)); then
		say "apt packages: all ${#APT_PACKAGES[@]} present"
		return
	fi
	if ((EUID != 0)); then
		say "apt packages missing (${missing[*]}) and not root: install them as root" >&2
		exit 1
	fi
	say "apt packages: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
}

prepare_venv() {
	local python="${PYTHON:-python3}"
	if [[ ! -x "$VENV/bin/python" ]]; then
		say "venv: creating $VENV with $(command -v "$python") ($("$python" --version 2>&1))"
		"$python" -m venv "$VENV"
		rm -f "$REQUIREMENTS_STAMP"
	fi
	local wanted_hash
	wanted_hash="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
	if [[ -f "$REQUIREMENTS_STAMP" && "$(cat "$REQUIREMENTS_STAMP")" == "$wanted_hash" ]]; then
		say "venv: requirements.txt unchanged since the last install"
		return
	fi
	say "venv: pip install -r requirements.txt"
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS"
	printf '%s\n' "$wanted_hash" >"$REQUIREMENTS_STAMP"
}

# The unmodified p4runtime-shell from PyPI, a client the P4Runtime tests
# check the server against; its own venv because it pins an old protobuf.
P4RUNTIME_SHELL_VENV="$REPO_ROOT/.venv-p4runtime-shell"
P4RUNTIME_SHELL="p4runtime-shell==0.0.6"

prepare_p4runtime_shell_venv() {
	if [[ -x "$P4RUNTIME_SHELL_VENV/bin/python" ]] &&
		"$P4RUNTIME_SHELL_VENV/bin/python" -m pip show p4runtime-shell 2>/dev/null |
		grep -x 'Version: 0.0.6' >/dev/null; then
		say "p4runtime-shell venv: $P4RUNTIME_SHELL present"
		return
	fi
	say "p4runtime-shell venv: installing $P4RUNTIME_SHELL into $P4RUNTIME_SHELL_VENV"
	"${PYTHON:-python3}" -m venv "$P4RUNTIME_SHELL_VENV"
	"$P4RUNTIME_SHELL_VENV/bin/python" -m pip install -q --disable-pip-version-check \
		"$P4RUNTIME_SHELL"
}

hugepages_total() {
	awk '/^HugePages_Total:/ {print $2}' /proc/meminfo
}

prepare_hugepages() {
	local total
	total="$(hugepages_total)"
	if ((total < HUGEPAGES_WANTED)) && ((EUID == 0)); then
		# Fails in unprivileged containers; that is fine, checked below.
		echo "$HUGEPAGES_WANTED" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
		total="$(hugepages_total)"
	fi
	if ! mountpoint -q "$HUGEPAGES_MOUNT" && ((EUID == 0)); then
		mkdir -p "$HUGEPAGES_MOUNT"
		mount -t hugetlbfs -o pagesize=2M nodev "$HUGEPAGES_MOUNT" 2>/dev/null || true
	fi
	if ((total >= HUGEPAGES_WANTED)) && mountpoint -q "$HUGEPAGES_MOUNT"; then
		say "hugepages: $total x 2 MB, mounted at $HUGEPAGES_MOUNT (benchmarks use them)"
	else
		say "hugepages: only $total x 2 MB or $HUGEPAGES_MOUNT not mounted;" \
			"tests run with --no-huge, benchmarks will be slower or fail"
	fi
}

install_apt_packages
prepare_venv
prepare_p4runtime_shell_venv
prepare_hugepages
say "done"
