"""The machines around the gNB, one network namespace each: `n3` (the UPF
that sends downlink GTP-U), `ran` (the DU that receives radio frames) and
`baas` (the buffering service that receives the RLC AM copies). Each is
joined to the NIC process by a veth pair: the NIC's PF (net_af_packet) on
the end in the root namespace, the neighbour's end inside its namespace
under the plain role name."""
from __future__ import annotations

import ctypes
import os
import socket
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass

from t4p4s.stf.veth import ETH_P_ALL, NetworkNamespace, VethPair, add_veth_pair

# The NIC's PF ports in contract order: P4 port N is the Nth role.
PF_ROLES = ("n3", "ran", "baas")
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Link:
    role: str
    netns: NetworkNamespace
    pair: VethPair       # pair.dp: the NIC's PF; pair.test: the neighbour's end (named role)


class TopologyNetwork:
    """Namespaces and veth pairs named after `tag` (unique per run, <= 8
    characters: interface names have at most 15); close() removes them."""

    def __init__(self, tag: str):
        self.tag = tag
        self.links: dict[str, Link] = {}
        try:
            for role in PF_ROLES:
                netns = NetworkNamespace(f"{tag}-{role}")
                link = Link(role, netns, VethPair(dp=f"{tag}-{role}", test=role))
                self.links[role] = link
                add_veth_pair(link.pair, netns)
        except BaseException:
            self.close()
            raise

    def pf_interfaces(self) -> list[str]:
        """The NIC's PF interfaces, P4 port order."""
        return [self.links[role].pair.dp for role in PF_ROLES]

    def close(self):
        for link in self.links.values():
            subprocess.run(["ip", "link", "del", link.pair.dp], capture_output=True, timeout=10)
            link.netns.close()
        self.links.clear()


@contextmanager
def inside(netns_name: str):
    """Runs the block with the calling thread in the namespace (setns acts
    per thread): sockets made there stay in it after the block."""
    home = open("/proc/thread-self/ns/net", "rb")
    target = open(f"/run/netns/{netns_name}", "rb")
    try:
        if _libc.setns(target.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns_name}: "
                          f"{os.strerror(ctypes.get_errno())}")
        try:
            yield
        finally:
            if _libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the original namespace")
    finally:
        target.close()
        home.close()


def packet_socket(netns_name: str, interface: str) -> socket.socket:
    """A raw AF_PACKET socket bound to `interface` inside the namespace."""
    with inside(netns_name):
        # protocol 0 until bound, else it receives from every interface first
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        sock.bind((interface, ETH_P_ALL))
    return sock
