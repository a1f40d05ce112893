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
