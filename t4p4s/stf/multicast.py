"""The multicast commands of bmv2's STF (simple_switch_CLI's `mc_*`), as
p4c's v1model samples write them, on the runtime's multicast groups.

simple_switch's packet replication engine has two levels: nodes (a
replication id, `rid`, and a set of ports; numbered 0, 1, 2... in the order
`mc_node_create` makes them) and groups, each a list of nodes. A packet
multicast to a group leaves once per (node, port), node by node in the
order they were associated, ports in increasing order, with egress_rid the
node's rid. The runtime keeps flat groups ((port, rid) replicas, the
P4Runtime MulticastGroupEntry model), so this model keeps the nodes and
sends a group's whole replica list whenever one of its nodes changes.

    mc_mgrp_create MGRP
    mc_mgrp_destroy MGRP
    mc_node_create RID PORT...          (the node's handle: 0, 1, 2...)
    mc_node_update HANDLE PORT...
    mc_node_associate MGRP HANDLE
    mc_node_dissociate MGRP HANDLE
    mc_node_destroy HANDLE
"""
from __future__ import annotations

from dataclasses import dataclass, field

from t4p4s.stf.parser import StfError

MAX_GROUP = 0xFFFF      # mcast_grp is bit<16>; 0 means no multicast
MAX_RID = 0xFFFF        # egress_rid is bit<16>


@dataclass
class _Node:
    rid: int
    ports: list[int]
    group: int | None = None


@dataclass
class MulticastModel:
    """The nodes and groups an STF file has made so far."""
    nodes: dict[int, _Node] = field(default_factory=dict)
    groups: dict[int, list[int]] = field(default_factory=dict)   # group -> node handles
    next_handle: int = 0

    def replicas(self, group: int) -> list[dict]:
        return [{"port": port, "rid": self.nodes[h].rid}
                for h in self.groups[group] for port in self.nodes[h].ports]

    def _set(self, group: int) -> dict:
        return {"cmd": "mcast_group_modify", "group": group, "replicas": self.replicas(group)}

    def _group(self, group: int, source: str) -> list[int]:
        if group not in self.groups:
            raise StfError(f"{source}: error: no multicast group {group} (mc_mgrp_create it first)")
        return self.groups[group]

    def _node(self, handle: int, source: str) -> _Node:
        if handle not in self.nodes:
            raise StfError(f"{source}: error: no multicast node {handle} (handles are "
                           f"numbered from 0 in mc_node_create order)")
        return self.nodes[handle]

    def requests(self, op: str, args: list[int], ports: list[int], source: str) -> list[dict]:
        """The control requests that command `op` makes (none for a node
        not in a group: the runtime has no nodes)."""
        if op == "mc_mgrp_create":
            group, = args
            if not 1 <= group <= MAX_GROUP:
                raise StfError(f"{source}: error: multicast group {group} out of range "
                               f"(1..{MAX_GROUP}: mcast_grp is bit<16>)")
            if group in self.groups:
                raise StfError(f"{source}: error: multicast group {group} exists")
            self.groups[group] = []
            return [{"cmd": "mcast_group_add", "group": group, "replicas": []}]
        if op == "mc_mgrp_destroy":
            group, = args
            for handle in self._group(group, source):
                self.nodes[handle].group = None
            del self.groups[group]
            return [{"cmd": "mcast_group_delete", "group": group}]
        if op == "mc_node_create":
            rid, = args
            if not 0 <= rid <= MAX_RID:
                raise StfError(f"{source}: error: rid {rid} out of range (0..{MAX_RID}: "
                               f"egress_rid is bit<16>)")
            self.nodes[self.next_handle] = _Node(rid, sorted(set(ports)))
            self.next_handle += 1
            return []
        if op == "mc_node_update":
            handle, = args
            node = self._node(handle, source)
            node.ports = sorted(set(ports))
            return [] if node.group is None else [self._set(node.group)]
        if op == "mc_node_destroy":
            handle, = args
            node = self._node(handle, source)
            del self.nodes[handle]
            if node.group is None:
                return []
            self.groups[node.group].remove(handle)
            return [self._set(node.group)]
        group, handle = args
        members = self._group(group, source)
        node = self._node(handle, source)
        if op == "mc_node_associate":
            if node.group is not None:
                raise StfError(f"{source}: error: multicast node {handle} is already in "
                               f"group {node.group}")
            node.group = group
            members.append(handle)
        else:   # mc_node_dissociate
            if node.group != group:
                raise StfError(f"{source}: error: multicast node {handle} is not in "
                               f"group {group}")
            node.group = None
            members.remove(handle)
        return [self._set(group)]
