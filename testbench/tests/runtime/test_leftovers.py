"""What a run leaves on the machine, and what a killed run's leftovers do
to the next one (issue 12, fault injection).

DPDK 22.11 keeps its runtime directory /var/run/dpdk/PREFIX after
rte_eal_cleanup(): every test run left one (1,600 had piled up). A memif
server killed with SIGKILL leaves its socket file, and the next server on
that path failed to start ("Address already in use"), so a killed NIC
could not be restarted."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from test_ports import file_prefix, run

pytestmark = pytest.mark.dpdk

RUNTIME_DIRS = Path("/var/run/dpdk")


def runtime_dir(tag: str) -> Path:
    return RUNTIME_DIRS / file_prefix(tag)


def test_a_clean_exit_removes_the_runtime_directory(l2fwd):
    done = run(l2fwd, ["net_null0"], "--duration", "0.2", tag="clean")
    assert done.returncode == 0, done.stderr
    assert "running" in done.stdout
    assert not runtime_dir("clean").exists()


def test_a_usage_error_removes_the_runtime_directory(l2fwd):
    done = run(l2fwd, ["net_null0"], "--no-such-option", tag="usage")
    assert done.returncode == 2, done.stderr
    assert not runtime_dir("usage").exists()


def memif_server(path: Path) -> str:
    return f"net_memif0,role=server,socket={path},socket-abstract=no,id=0"


def stale_socket(path: Path):
    """What a killed server leaves: a bound socket file nobody listens on."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.bind(str(path))
    sock.close()
    assert path.is_socket()


def test_a_stale_memif_socket_does_not_stop_a_restarted_server(l2fwd, tmp_path):
    path = tmp_path / "memif.sock"
    stale_socket(path)
    done = run(l2fwd, [memif_server(path)], "--duration", "0.2", tag="stale")
    assert done.returncode == 0, done.stderr
    assert f"removed the stale memif socket {path}" in done.stderr
    assert "running on 1 lcore(s), 1 port(s)" in done.stdout


def test_a_live_memif_servers_socket_is_left_alone(l2fwd, tmp_path):
    """Another process serves the path: this one must not take it over."""
    path = tmp_path / "memif.sock"
    live = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    live.bind(str(path))
    live.listen(1)
    try:
        done = run(l2fwd, [memif_server(path)], "--duration", "0.2", tag="live")
        assert done.returncode != 0
        assert "did not probe" in done.stderr
        assert "removed" not in done.stderr
        # the live server's socket still answers
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        probe.connect(str(path))
        probe.close()
    finally:
        live.close()
    assert not runtime_dir("live").exists()
