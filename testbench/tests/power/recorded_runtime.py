"""A control socket that answers with recorded_power.json, the contract's
shape (/work/notes/power_interface.md), for the sidecar's parsing tests
(test_contract.py): JSON lines over a UNIX stream socket, as the runtime's.
`power` answers the recording with busy_ns advanced by `advance_ns` per
call (as empty polls: poll_ns with it, work_ns as recorded); `power_mode` and `power_thresholds` answer what the contract says,
refusing an unknown mode, lcore or threshold key as the runtime would."""
from __future__ import annotations

import copy
import json
import os
import socket
import threading
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "recorded_power.json"
MODES = ("busy", "nap", "adaptive", "proportional", "pmgmt-pause", "pmgmt-monitor",
         "pmgmt-scale")


class RecordedRuntime:
    def __init__(self, path: Path, advance_ns: int = 0, tid: int | None = None):
        self.reply = json.loads(RECORDED.read_text())
        if tid is not None:                 # the lcores' threads: this process's
            for lc in self.reply["lcores"]:
                lc["tid"] = tid
        self.advance_ns = advance_ns
        self.requests: list[dict] = []
        self.path = path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn):
        with conn, conn.makefile("rwb") as stream:
            for line in stream:
                request = json.loads(line)
                self.requests.append(request)
                stream.write(json.dumps(self.answer(request)).encode() + b"\n")
                stream.flush()

    def answer(self, request: dict) -> dict:
        lcores = {lc["lcore"]: lc for lc in self.reply["lcores"]}
        cmd = request["cmd"]
        if cmd == "power":
            for lc in lcores.values():
                lc["busy_ns"] += self.advance_ns
                lc["poll_ns"] += self.advance_ns
                lc["pstate_residency_ns"][lc["pstate"]] += self.advance_ns
            return copy.deepcopy(self.reply)
        chosen = list(lcores) if "lcore" not in request else [request["lcore"]]
        if any(c not in lcores for c in chosen):
            return {"ok": False, "error": "ENOENT", "message": f"no lcore {request['lcore']}"}
        if cmd == "power_mode":
            if request["mode"] not in MODES:
                return {"ok": False, "error": "EINVAL",
                        "message": f"unknown mode {request['mode']}"}
            for c in chosen:
                lcores[c]["mode"] = request["mode"]
            return {"ok": True, "lcores": chosen}
        if cmd == "power_thresholds":
            unknown = set(request["thresholds"]) - set(self.reply["thresholds"])
            if unknown:
                return {"ok": False, "error": "EINVAL",
                        "message": f"unknown threshold {sorted(unknown)[0]}"}
            for c in chosen:
                lcores[c]["thresholds"].update(request["thresholds"])
            return {"ok": True, "thresholds": lcores[chosen[0]]["thresholds"]}
        return {"ok": False, "error": "EINVAL", "message": f"unknown command {cmd}"}

    def close(self):
        self.server.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
