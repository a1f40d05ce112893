"""State shared by the C emitter's modules while generating one program."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ...midend.v1model import V1ModelProgram
from ..resources import Resources
from .expressions import WideConstants
from .types import CTypes

DROP_PORT = 511

# standard_metadata.instance_type values (bmv2 simple_switch)
INSTANCE_NORMAL = 0
INSTANCE_INGRESS_CLONE = 1
INSTANCE_EGRESS_CLONE = 2
INSTANCE_REPLICATION = 5


@dataclass
class Context:
    bound: V1ModelProgram
    resources: Resources
    ctypes: CTypes = field(default_factory=CTypes)
    constants: WideConstants = field(default_factory=WideConstants)
    _ids: itertools.count = field(default_factory=itertools.count)
    # C path of each header of the headers struct (stack elements too; a
    # stack's own path for `.next`) -> (headers.Instance, element number)
    header_instances: dict = field(default_factory=dict)
    # clone types the program uses ("I2E", "E2E"): known statically, so a
    # program without clones carries no clone code
    clone_kinds: frozenset = frozenset()
    # the program names standard_metadata.mcast_grp: it may multicast, so
    # the packet replication engine's code is generated (none otherwise)
    multicast: bool = False

    @property
    def snapshot_i2e(self) -> bool:
        """I2E clones: the parser keeps the received header bytes."""
        return "I2E" in self.clone_kinds

    @property
    def errors(self) -> list:
        return self.bound.error_members()

    def error_code(self, name: str) -> int:
        errs = self.errors
        return errs.index(name) if name in errs else 0

    def temp(self, hint: str = "tmp") -> str:
        return f"{hint}_{next(self._ids)}"
