"""The --entries file of the gNB steps: n DRBs in the DRB table (RLC AM,
18-bit SNs, as the radio-headers step assumes) and the clone session to
the buffering-service port."""

import json
from pathlib import Path

from testbench.bench.gnb_traffic import QFI, drb_teid

BAAS_CLONE_SESSION = 1
BAAS_PORT = 2


def write_drb_entries(n_drbs: int, directory: Path) -> Path:
    commands = [{"cmd": "table_add", "table": "dl_drb", "match": {"teid": drb_teid(drb)},
                 "action": "set_dl_drb",
                 "params": {"drb_index": drb, "ue_id": drb, "lcid": 4, "rlc_am": 1, "rlc_sn18": 1,
                            "pdcp_sn18": 1, "default_qfi": QFI, "ue_mac": 0x020000000000 | drb}}
                for drb in range(n_drbs)]
    commands.append({"cmd": "clone_session_add", "session": BAAS_CLONE_SESSION, "port": BAAS_PORT})
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"drbs_{n_drbs}.json"
    path.write_text(json.dumps(commands, separators=(",", ":")))
    return path
