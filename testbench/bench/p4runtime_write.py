"""The P4Runtime server's write rate: 65,536 exact entries (the gNB's DRB
table size) of testbench/p4/p4runtime/p4rt_objects.p4 INSERTed into two
targets, each on its own lcore, in Write RPCs of 8,192 updates built once
and sent as they are (raw gRPC: the figure is the server's, not a client
library's encoding; gnbctl's own figure is drb_load). Each run starts from
empty tables (the entries are DELETEd again, untimed). The goal is the one
a test used to assert, where a loaded machine made it flake: under 1 s for
all the Writes."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import grpc
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from t4p4s.stf.compile_cache import compile_cached
from t4p4s.stf.control import RuntimeProcess, StfError, test_eal_args
from testbench.bench.dpdk import BenchError
from testbench.tests.p4runtime.p4rt_client import TIMEOUT, Client, Names, load_p4info

REPO_ROOT = Path(__file__).resolve().parents[2]
OBJECTS_P4 = REPO_ROOT / "testbench" / "p4" / "p4runtime" / "p4rt_objects.p4"
ENTRIES = 65_536
BATCH = 8_192
GOAL_SECONDS = 1.0


def exact_entry_requests(names: Names, n: int, batch: int, kind: str = "INSERT",
                         device_id: int = 1) -> list[p4r.WriteRequest]:
    """WriteRequests of `batch` updates each for ingress.t_exact entries
    f1 = 0 .. n-1, each forward(port 1, tag f1 & 0xff), election id 1."""
    table_id = names.tables["ingress.t_exact"].preamble.id
    forward = names.actions["ingress.forward"]
    param_ids = {p.name: p.id for p in forward.params}
    requests = []
    for start in range(0, n, batch):
        request = p4r.WriteRequest(device_id=device_id)
        request.election_id.low = 1
        for i in range(start, min(start + batch, n)):
            u = request.updates.add(type=p4r.Update.Type.Value(kind))
            e = u.entity.table_entry
            e.table_id = table_id
            e.match.add(field_id=1).exact.value = i.to_bytes(4, "big")
            if kind != "DELETE":
                e.action.action.action_id = forward.preamble.id
                e.action.action.params.add(param_id=param_ids["port"], value=b"\x01")
                e.action.action.params.add(param_id=param_ids["tag"], value=(i & 0xff).to_bytes(1, "big"))
        requests.append(request)
    return requests


def measure(repeats: int, build_dir: Path) -> dict:
    build_dir = build_dir.resolve()
    build = compile_cached(OBJECTS_P4, build_dir / "cache")
    names = Names(load_p4info(build.p4info_text_path))
    inserts = exact_entry_requests(names, ENTRIES, BATCH)
    deletes = exact_entry_requests(names, ENTRIES, BATCH, kind="DELETE")
    runtimes, clients = [], []
    try:
        for lcore in (0, 1):
            eal = test_eal_args(f"bench-p4rt-write-{lcore}", lcores=str(lcore)) + \
                ["--vdev", f"net_ring{lcore}"]
            runtime = RuntimeProcess(build.executable_path, eal,
                                     ["--governor", "nap", "--p4runtime", "127.0.0.1:0"],
                                     build_dir / "runs" / f"p4runtime-write-{lcore}")
            runtimes.append(runtime)
            try:
                client = Client(runtime.p4runtime_address())
            except StfError as e:
                raise BenchError(str(e)) from None
            clients.append(client)
            if client.arbitrate((0, 1)).status.code != 0:
                raise BenchError(f"target on lcore {lcore}: not primary")
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            for client in clients:
                for request in inserts:
                    client.stub.Write(request, timeout=TIMEOUT)
            runs.append(time.perf_counter() - start)
            for client in clients:
                for request in deletes:
                    client.stub.Write(request, timeout=TIMEOUT)
    except grpc.RpcError as e:
        raise BenchError(f"P4Runtime Write failed: {e.code().name}: {e.details()}") from None
    finally:
        for client in clients:
            client.close()
        for runtime in runtimes:
            runtime.stop()
    median = statistics.median(runs)
    return {
        "description": f"{ENTRIES} exact entries INSERTed into 2 targets (one lcore each) "
                       f"in raw P4Runtime Writes of {BATCH} updates, one target after the other",
        "entries_per_target": ENTRIES, "targets": 2, "updates_per_write": BATCH,
        "median_seconds": median,
        "median_entries_per_s": 2 * ENTRIES / median,
        "runs_seconds": runs,
        "goal": {"seconds": GOAL_SECONDS, "met": median < GOAL_SECONDS},
    }
