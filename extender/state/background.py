"""Stopping the state layer's background tasks (informers' helpers, refreshers, resync loops)."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel_and_wait(*tasks: asyncio.Task[None] | None) -> None:
    """Cancel the tasks (None: nothing to stop), then wait until each has stopped."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    for task in running:
        with contextlib.suppress(asyncio.CancelledError):
            await task
