"""Python stubs of the project's own .proto files (baas/proto/baas.proto,
power/proto/power.proto), generated at run time, never committed.

`stubs(proto)` runs grpc_tools' protoc on PROTO into
build/python/<stem>/<hash>/ (the hash of the .proto and grpcio-tools'
version, so an edited .proto gets new stubs) and imports them as
`<stem>_pb2` and `<stem>_pb2_grpc`. Concurrent processes (pytest workers,
two gnbctl, gnbctl and the power sidecar) may generate at once: each
writes into its own temporary directory and renames it into place; the
first rename wins and the others' copies are removed."""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from controller.errors import GnbctlError

REPO = Path(__file__).resolve().parents[1]
STUB_ROOT = REPO / "build" / "python"


def _stub_directory(proto_path: Path) -> Path:
    """build/python/<stem>/<hash>/ with <stem>_pb2.py and <stem>_pb2_grpc.py,
    generated if not there yet."""
    stem = proto_path.stem
    try:
        tools = importlib.metadata.version("grpcio-tools")
    except importlib.metadata.PackageNotFoundError:
        raise GnbctlError(f"the {stem} client needs grpcio-tools (pip install grpcio-tools, "
                          "see requirements.txt) to generate its stubs") from None
    try:
        proto = proto_path.read_bytes()
    except OSError as e:
        raise GnbctlError(f"cannot read {proto_path}: {e.strerror}") from None
    digest = hashlib.sha256(proto + b"\0" + tools.encode()).hexdigest()[:16]
    parent = STUB_ROOT / stem
    final = parent / digest
    if (final / f"{stem}_pb2_grpc.py").is_file():
        return final
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=parent))
    try:
        from grpc_tools import protoc
        well_known = importlib.util.find_spec("grpc_tools").submodule_search_locations[0]
        status = protoc.main(["grpc_tools.protoc", f"-I{proto_path.parent}",
                              f"-I{Path(well_known) / '_proto'}", f"--python_out={scratch}",
                              f"--grpc_python_out={scratch}", str(proto_path)])
        if status != 0:
            raise GnbctlError(f"protoc failed on {proto_path} (status {status})")
        os.chmod(scratch, 0o755)
        try:
            os.rename(scratch, final)
        except OSError:
            # another process renamed its copy first: same input, same stubs
            if not (final / f"{stem}_pb2_grpc.py").is_file():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def _import(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@functools.cache
def stubs(proto_path: Path):
    """(<stem>_pb2, <stem>_pb2_grpc) of PROTO_PATH, generated on first use."""
    directory = _stub_directory(proto_path)
    stem = proto_path.stem
    # <stem>_pb2_grpc imports <stem>_pb2 by that name
    pb2 = _import(f"{stem}_pb2", directory / f"{stem}_pb2.py")
    return pb2, _import(f"{stem}_pb2_grpc", directory / f"{stem}_pb2_grpc.py")


def to_dict(message) -> dict:
    """A message's fields by name: maps as dicts, repeated fields as lists,
    unset message (and proto3 `optional`) fields as None, enums by name."""
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = ({k: to_dict(v) for k, v in value.items()}
                               if value_field.message_type is not None else dict(value))
        elif field.is_repeated:
            out[field.name] = [to_dict(v) if field.message_type else v for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        elif field.message_type is not None:
            out[field.name] = to_dict(value)
        elif field.enum_type is not None:
            out[field.name] = field.enum_type.values_by_number[value].name
        else:
            out[field.name] = value
    return out
