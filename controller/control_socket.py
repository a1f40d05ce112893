"""A target's JSON control socket (topology key `control`, the process's
--control): one command, one reply, on a connection of its own. What only
the runtime itself knows comes from there: its lcores' load and its own
drops (the P4 program's are P4Runtime counters). The protocol is the
runtime's (t4p4s/runtime/src/control_json.c): a JSON object per line each
way, {"ok": false, "error": ..., "message": ...} for a refusal."""
from __future__ import annotations

import asyncio
import json

from controller.errors import GnbctlError, TargetUnreachable

REQUEST_TIMEOUT_S = 2.0
# a `stats` reply carries every port, lcore and queue with their histograms
MAX_REPLY = 64 << 20


async def request(config, command: dict, timeout: float = REQUEST_TIMEOUT_S) -> dict:
    """The reply to `command` from config.control. TargetUnreachable when
    nothing answers within `timeout`, GnbctlError when the runtime refuses
    the command or replies with something that is not JSON."""
    path = config.control
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_REPLY)
            try:
                writer.write(json.dumps(command).encode() + b"\n")
                await writer.drain()
                line = await reader.readline()
            finally:
                writer.close()
    except TimeoutError:
        raise TargetUnreachable(f"{config.name}: no answer on its control socket {path} "
                                f"within {timeout:g} s") from None
    except (OSError, ValueError) as e:
        # ValueError: a reply line beyond MAX_REPLY
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise TargetUnreachable(f"{config.name}: cannot reach its control socket {path} "
                                f"({reason}): is it running with --control {path}? "
                                "(topology key 'control')") from None
    if not line:
        raise TargetUnreachable(f"{config.name}: its control socket {path} closed without "
                                "a reply")
    try:
        reply = json.loads(line)
    except json.JSONDecodeError:
        raise GnbctlError(f"{config.name}: its control socket {path} replied with no JSON: "
                          f"{line[:100]!r}") from None
    if not isinstance(reply, dict) or not reply.get("ok"):
        said = ": ".join(str(reply.get(k)) for k in ("error", "message") if reply.get(k)) \
            if isinstance(reply, dict) else repr(reply)
        raise GnbctlError(f"{config.name}: its control socket {path} refused "
                          f"{command.get('cmd')}: {said or 'no reason given'}")
    return reply
