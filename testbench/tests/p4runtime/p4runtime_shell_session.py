"""Run by test_p4runtime_shell.py with the interpreter of the separate
p4runtime-shell venv (it pins an old protobuf): connects to a target with
the unmodified p4runtime-shell from PyPI, inserts one table entry and
prints what it reads back.

usage: python p4runtime_shell_session.py HOST:PORT"""
import sys

import p4runtime_sh.shell as sh


def main(address: str) -> None:
    # no config: the shell fetches the P4Info with GetForwardingPipelineConfig
    sh.setup(device_id=1, grpc_addr=address, election_id=(0, 1))
    try:
        entry = sh.TableEntry("ingress.t_exact")(action="ingress.forward")
        entry.match["hdr.data.f1"] = "0x0a0b0c0d"
        entry.action["port"] = "3"
        entry.action["tag"] = "0x22"
        entry.insert()
        for read in sh.TableEntry("ingress.t_exact").read():
            print("READ", read.msg().SerializeToString().hex())
    finally:
        sh.teardown()


if __name__ == "__main__":
    main(sys.argv[1])
