"""Waiting in tests for something a process does in its own time."""
from __future__ import annotations

import time

POLL_S = 0.05


def wait_for(predicate, timeout_s: float = 10.0, what: str = "condition"):
    """predicate()'s first true value, polled every POLL_S; AssertionError
    naming `what` when none came within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout_s:g} s")
        time.sleep(POLL_S)
