"""The bulk encoder's updates are the ones finsy encodes entity by entity
(values compared as integers: the bulk path sends them at full width)."""
from __future__ import annotations

import finsy as fy
import numpy as np
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import drbs, entities
from controller.bulk import ExactInsertEncoder


def canonical(update: p4r.Update) -> p4r.Update:
    update = p4r.Update.FromString(update.SerializeToString())
    entry = update.entity.table_entry
    for m in entry.match:
        m.exact.value = int.from_bytes(m.exact.value, "big").to_bytes(
            max(1, (int.from_bytes(m.exact.value, "big").bit_length() + 7) // 8), "big")
    for p in entry.action.action.params:
        v = int.from_bytes(p.value, "big")
        p.value = v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")
    return update


@pytest.mark.parametrize("role", ["host", "nic"])
def test_bulk_updates_equal_finsys(compiled, repo_root, role):
    schema = fy.P4Schema(compiled(repo_root / "p4src" / f"{role}.p4").p4info_text_path)
    sample = [0, 1, 255, 256, 4095, 65535]
    drb_set = drbs.DrbSet.from_drbs([drbs.Drb.generated(i) for i in sample])
    for table, action, mapping, build in (
            ("dl_drb", "set_dl_drb", drbs.DL_COLUMNS, entities.dl_drb),
            ("ul_bearer", "set_ul_bearer", drbs.UL_COLUMNS, entities.ul_bearer)):
        encoder = ExactInsertEncoder(schema, role, table, action)
        rows = encoder.encode(drb_set.count, {k: drb_set.columns[v] for k, v in mapping.items()})
        request = p4r.WriteRequest.FromString(rows.tobytes())
        expected = fy.p4entity.encode_updates([+build(drbs.Drb.generated(i)) for i in sample],
                                              schema)
        assert [canonical(u) for u in request.updates] == list(expected)


def test_values_that_do_not_fit_are_refused(compiled, repo_root):
    schema = fy.P4Schema(compiled(repo_root / "p4src" / "host.p4").p4info_text_path)
    encoder = ExactInsertEncoder(schema, "host", "dl_drb", "set_dl_drb")
    values = {k: np.zeros(2, dtype=np.uint64) for k in drbs.DL_COLUMNS}
    values["default_qfi"] = np.array([9, 64], dtype=np.uint64)
    with pytest.raises(ValueError, match="default_qfi: a value does not fit in 6 bits"):
        encoder.encode(2, values)
