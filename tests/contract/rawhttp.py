"""The server's HTTP protocol fed bytes as a socket would, against a transport that records
what it is asked to do (no socket, no server: every write and close is seen)."""

from __future__ import annotations

import asyncio
from typing import Any


class RecordingTransport(asyncio.Transport):
    """What a socket transport is asked to do, kept."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8888)}.get(
            name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.writes.append(b"<eof>")
