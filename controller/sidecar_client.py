"""What gnbctl's clients of the sidecars (controller/baas.py: the BaaS;
controller/power.py: the power governor sidecar) share: a grpc.aio channel
to the address of the topology's table, each call with the topology's
deadline, and a failed call turned into the controller's errors with the
gRPC status named: the client's `unreachable` error (a TargetUnreachable,
exit code 3) when nothing answers in time or the sidecar answers
UNAVAILABLE, its `error_type` (exit code 1) for any other status."""
from __future__ import annotations

import grpc

from controller.errors import GnbctlError, TargetUnreachable, TopologyError


class SidecarError(GnbctlError):
    """The sidecar answered with an error status; `code` is its name."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


class SidecarUnreachable(TargetUnreachable):
    """Nothing answered at the sidecar's address in time, or it answered
    UNAVAILABLE; `code` is the status name."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


class SidecarClient:
    """A client of one sidecar: `async with Client(address) as c: ...`.
    `name` prefixes every error; `timeout` is each call's deadline.
    A subclass names what it talks to and how it is configured."""

    table = ""                 # the topology's table and attribute ("baas")
    what = ""                  # the sidecar in messages ("the BaaS")
    address_forms = ""         # the addresses the table takes, for its error
    stub = ""                  # the generated stub class ("BaasStub")
    channel_options: list = []
    error_type: type[SidecarError] = SidecarError
    unreachable: type[SidecarUnreachable] = SidecarUnreachable

    def __init__(self, address: str, name: str | None = None, timeout: float = 5.0):
        self.address = address
        self.name = name or self.table
        self.timeout = timeout
        self.pb2, self._grpc = self.stubs()
        self._channel = None
        self._stub = None

    @staticmethod
    def stubs():
        """(pb2, pb2_grpc) of the sidecar's .proto."""
        raise NotImplementedError

    @classmethod
    def of(cls, topology, timeout: float | None = None):
        """The topology's sidecar (its table)."""
        config = getattr(topology, cls.table)
        if config is None:
            raise TopologyError(f"{topology.path}: no [{cls.table}] table: the topology does "
                                f"not say where {cls.what} is (address = {cls.address_forms})")
        return cls(config.address, config.name,
                   topology.timeout if timeout is None else timeout)

    async def __aenter__(self):
        self._channel = grpc.aio.insecure_channel(self.address, options=self.channel_options)
        self._stub = getattr(self._grpc, self.stub)(self._channel)
        return self

    async def __aexit__(self, *exc):
        await self._channel.close()
        self._channel = self._stub = None

    def unavailable_message(self, code: str, details: str) -> str:
        """What an UNAVAILABLE status says (the sidecar's own, or gRPC's
        when nothing listens)."""
        return f"{self.name}: cannot reach {self.what} at {self.address}: {code}: {details}"

    def error(self, e: grpc.aio.AioRpcError) -> GnbctlError:
        code, details = e.code().name, e.details()
        if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            return self.unreachable(f"{self.name}: cannot reach {self.what} at {self.address}: "
                                    f"no answer within {self.timeout:g} s ({code})", code)
        if e.code() == grpc.StatusCode.UNAVAILABLE:
            return self.unreachable(self.unavailable_message(code, details), code)
        return self.error_type(f"{self.name}: {code}: {details}", code)

    async def _unary(self, method: str, request):
        try:
            return await getattr(self._stub, method)(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as e:
            raise self.error(e) from None

    async def _stream(self, method: str, request, timeout: float | None = None):
        """A server stream's messages until the caller stops iterating
        (which cancels the call); its error status as the client's error."""
        call = getattr(self._stub, method)(request, timeout=timeout)
        try:
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as e:
            raise self.error(e) from None
        finally:
            call.cancel()
