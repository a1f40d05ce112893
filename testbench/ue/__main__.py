"""python -m testbench.ue --netns NS --interface IF --loss 0.01 --seed N
[--duration S] --json OUT

Runs the UE emulator on IF (inside NS) until SIGTERM, SIGINT or S seconds,
then writes the summary (UeEmulator.summary) to OUT as JSON (to stdout
without --json). Prints one line "ready" on stdout once the socket is
bound: frames sent after it are seen."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from testbench.ue.emulator import (STATUS_MAX_BYTES_DEFAULT, EmulatorConfig, UeEmulator,
                                   open_radio_socket)
from testbench.ue.link import LossyLink
from testbench.ue.rlc_am_rx import DEFAULT_T_REASSEMBLY_MS, DEFAULT_T_STATUS_PROHIBIT_MS

READY_LINE = "ready"


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m testbench.ue", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--netns", help="network namespace of the interface (default: this one)")
    parser.add_argument("--interface", required=True, help="the radio-side interface")
    parser.add_argument("--loss", type=float, default=0.0,
                        help="share of downlink frames the link drops (default 0)")
    parser.add_argument("--uplink-loss", type=float, default=0.0,
                        help="share of STATUS frames the link drops (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the link's drops")
    parser.add_argument("--duration", type=float, help="seconds to run (default: until SIGTERM)")
    parser.add_argument("--json", type=Path, help="summary file (default: stdout)")
    parser.add_argument("--t-reassembly-ms", type=int, default=DEFAULT_T_REASSEMBLY_MS)
    parser.add_argument("--t-status-prohibit-ms", type=int, default=DEFAULT_T_STATUS_PROHIBIT_MS)
    parser.add_argument("--status-max-bytes", type=int, default=STATUS_MAX_BYTES_DEFAULT,
                        help="bound on a STATUS PDU's size, 5.3.4 trimming (default "
                             f"{STATUS_MAX_BYTES_DEFAULT}: a 1,500-octet MTU less the shim; "
                             "0: none)")
    parser.add_argument("--pad-status-to", type=int, default=0,
                        help="zero-pad STATUS frames to this many octets (60: Ethernet minimum)")
    parser.add_argument("--gnb-mac", help="STATUS destination MAC (default: learnt per DRB)")
    parser.add_argument("--out-of-order", action="store_true",
                        help="deliver SDUs as they complete (5.2.3.2.3), not in SN order")
    parser.add_argument("--no-sdap", action="store_true", help="SDUs carry no SDAP header")
    parser.add_argument("--learn-first-sn", action="store_true",
                        help="start each DRB's RX_Next at its first frame's SN, not 0")
    parser.add_argument("--no-k-lists", action="store_true",
                        help="leave delivered_k, duplicate_k and order_violations out of the JSON")
    return parser.parse_args(argv)


def write_json(summary: dict, path: Path | None):
    text = json.dumps(summary, indent=1)
    if path is None:
        sys.stdout.write(text + "\n")
        return
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text + "\n")
    os.replace(temporary, path)        # a reader never sees half a file


def main(argv=None) -> int:
    arguments = parse_arguments(argv)
    config = EmulatorConfig(t_reassembly_ms=arguments.t_reassembly_ms,
                            t_status_prohibit_ms=arguments.t_status_prohibit_ms,
                            in_order=not arguments.out_of_order, sdap=not arguments.no_sdap,
                            learn_first_sn=arguments.learn_first_sn,
                            status_max_bytes=arguments.status_max_bytes or None,
                            status_pad_to=arguments.pad_status_to, gnb_mac=arguments.gnb_mac,
                            record_k=not arguments.no_k_lists)
    link = LossyLink(arguments.loss, arguments.seed, arguments.uplink_loss)
    stop = threading.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda number, frame: stop.set())
    sock = open_radio_socket(arguments.interface, arguments.netns)
    emulator = UeEmulator(sock.send, link, config)
    print(READY_LINE, flush=True)
    try:
        emulator.serve(sock, stop, arguments.duration)
    finally:
        write_json(emulator.summary(with_k=not arguments.no_k_lists), arguments.json)
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
