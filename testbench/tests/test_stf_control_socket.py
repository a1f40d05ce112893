"""Where the STF runner puts the runtime's --control socket."""
from pathlib import Path

from t4p4s.stf.control import MAX_SOCKET_PATH, _control_socket_path


def test_socket_stays_in_a_short_run_dir(tmp_path):
    path, extra_dir = _control_socket_path(tmp_path)
    assert path == tmp_path.resolve() / "control.sock" and extra_dir is None


def test_deep_run_dir_gets_a_short_private_socket_dir(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    path, extra_dir = _control_socket_path(deep)
    try:
        assert len(str(path)) <= MAX_SOCKET_PATH
        assert path.parent == extra_dir and extra_dir.is_dir()
    finally:
        extra_dir.rmdir()


def test_a_taken_fanout_group_is_told_from_other_startup_failures():
    """RuntimeProcess and gnbctl up start a runtime again only for this
    failure (DPDK 22.11 net_af_packet's words), never for any other."""
    from t4p4s.stf.control import fanout_group_taken
    taken = ("rte_pmd_init_internals(): net_af_packet0: could not set PACKET_FANOUT on "
             "AF_PACKET socket for t4701c29p0d:Invalid argument\n"
             "vdev_probe(): failed to initialize net_af_packet0 device\n")
    assert fanout_group_taken(taken)
    for other in ("rte_pmd_init_internals(): net_af_packet0: could not set PACKET_FANOUT on "
                  "AF_PACKET socket for x:Operation not permitted\n",
                  "error: --vdev net_af_packet0,iface=nope did not probe\n",
                  "EAL: Cannot allocate memory\n"):
        assert not fanout_group_taken(other)
