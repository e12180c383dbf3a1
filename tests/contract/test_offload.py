"""Large requests: one at a time off the loop, the others wait their turn (bounded), and the
handler's own state changes come back to the loop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import weakref

import pytest

from extender.api.offload import Busy, Offloader
from extender.state.gate import StateGate
from tests.conftest import fixture_bytes
from tests.kube.kube_helpers import eventually

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_one_large_request_at_a_time_and_a_bounded_wait() -> None:
    offload = Offloader(slot_wait=0.1)
    async with offload.slot():
        with pytest.raises(Busy, match="busy with another large request for 0.1s"):
            async with offload.slot():
                pass
        assert offload.waiting == 0
    async with offload.slot():  # free again
        pass


async def test_work_runs_in_the_worker_and_its_changes_come_back_to_the_loop() -> None:
    offload = Offloader()
    gate = StateGate()
    loop_thread = threading.get_ident()
    seen: list[tuple[str, int]] = []

    async def work() -> int:
        seen.append(("work", threading.get_ident()))
        offload.call_on_loop(lambda: seen.append(("on_loop", threading.get_ident())))
        assert gate.busy
        return 42

    assert await offload.run(gate, work()) == 42
    assert not gate.busy and offload.running == 0
    (_, worker), (_, back) = seen
    assert worker != loop_thread and back == loop_thread
    offload.close()


async def test_the_gate_is_held_until_the_worker_returns_even_if_the_caller_gives_up() -> None:
    offload = Offloader()
    gate = StateGate()
    started = threading.Event()
    release = threading.Event()

    async def work() -> None:
        started.set()
        assert release.wait(5)

    task = asyncio.ensure_future(offload.run(gate, work()))
    await eventually(started.is_set, what="the worker to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gate.busy  # the worker still reads: changes must still wait
    applied: list[int] = []
    gate.call(applied.append, 1)
    assert applied == []
    release.set()
    await eventually(lambda: not gate.busy, what="the gate to open")
    assert applied == [1]
    offload.close()


class _Item:
    __slots__ = ("__weakref__",)


class _Last(_Item):
    """Freed once the test has seen the reply, or the wait runs out (the reply was held)."""

    __slots__ = ()
    reply_seen = threading.Event()
    freed: list[bool] = []

    def __del__(self) -> None:
        self.freed.append(self.reply_seen.wait(5))


async def test_what_a_large_request_keeps_is_freed_after_its_reply_then_collecting_resumes(
        ) -> None:
    offload = Offloader()
    gate = StateGate()
    box: list[list[_Item]] = [[_Last(), *(_Item() for _ in range(999))]]
    alive = [weakref.ref(item) for item in box[0]]
    shared = [_Item() for _ in range(10)]  # also held by this test: must stay whole
    collecting_in_work: list[bool] = []

    async def work() -> int:
        kept = box.pop()  # the request's only reference
        by_index = dict(enumerate(kept))
        offload.free_in_slices(kept, by_index, shared)
        collecting_in_work.append(gc.isenabled())
        return len(kept)

    assert gc.isenabled(), "the test needs the collector on to see it paused"
    assert await offload.run(gate, work()) == 1000
    _Last.reply_seen.set()
    await eventually(lambda: not any(ref() is not None for ref in alive),
                     what="the kept items to be freed")
    await eventually(gc.isenabled, what="the collector to resume")
    assert _Last.freed == [True]  # not before the reply: the worker freed them after it
    assert collecting_in_work == [False] and len(shared) == 10
    on_loop = [_Item()]
    offload.free_in_slices(on_loop)  # not in the worker: left alone
    assert len(on_loop) == 1
    offload.close()


async def test_medium_bodies_take_one_of_a_few_slots_with_a_bounded_wait() -> None:
    from extender.api.offload import MEDIUM_BYTES, MEDIUM_SLOTS

    offload = Offloader(slot_wait=0.1)
    assert not offload.is_medium(MEDIUM_BYTES) and offload.is_medium(MEDIUM_BYTES + 1)
    assert not offload.is_medium(None)  # undeclared: large, off the loop
    async with contextlib.AsyncExitStack() as held:
        for _ in range(MEDIUM_SLOTS):
            await held.enter_async_context(offload.medium_slot())
        with pytest.raises(Busy, match=f"busy with {MEDIUM_SLOTS} other requests for 0.1s"):
            async with offload.medium_slot():
                pass
    async with offload.medium_slot():  # free again
        pass


def test_large_bodies_are_answered_like_small_ones(client, runtime) -> None:
    """The same request below and above the threshold: the same reply."""
    body = fixture_bytes("filter-nodes.request.json")
    runtime.offload.threshold = len(body) + 1
    on_loop = client.post("/filter", content=body)
    runtime.offload.threshold = 1
    off_loop = client.post("/filter", content=body)
    assert on_loop.status_code == off_loop.status_code == 200
    assert on_loop.content == off_loop.content
    # The pod was remembered (on the loop) for its bind.
    assert runtime.state.pending_pod("uid-default-api-7d9f") is not None


def test_medium_bodies_are_answered_on_the_loop_like_large_ones(client, runtime) -> None:
    """A NodeNames body between 64 KiB and the offload threshold (a pod with a large
    annotation) runs on the loop in a medium slot: the same reply as off the loop."""
    import json

    from extender.api.offload import MEDIUM_BYTES

    request = json.loads(fixture_bytes("filter-names.request.json"))
    request["Pod"]["metadata"].setdefault("annotations", {})["note"] = "x" * MEDIUM_BYTES
    body = json.dumps(request).encode()
    assert runtime.offload.is_medium(len(body)) and not runtime.offload.is_large(len(body))
    on_loop = client.post("/filter", content=body)
    runtime.offload.threshold = 1
    off_loop = client.post("/filter", content=body)
    assert on_loop.status_code == off_loop.status_code == 200
    assert on_loop.content == off_loop.content
    assert on_loop.json()["NodeNames"]

