"""`serve --record` and its replay (`extender.api.replay`), in process and in snapshot mode: a
session is recorded through the real app, replayed, and must match; a recording with a state
change corrupted, dropped or moved must not, and the report must name the exchange."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from extender import serve
from extender.api.app import create_app
from extender.api.replay import ReplayReport, replay, replay_file
from extender.api.rowreply import REPLIES_PER_LIST
from extender.api.runtime import Runtime
from extender.engine import registry
from extender.model import k8s
from extender.state import recording
from extender.state.recorder import Recorder, raw
from extender.state.snapshot import typed_objects
from tests.conftest import FIXTURES, fixture_bytes
from tests.engine.upstream.builders import node, pod
from tests.serving import serve_args, served

POLICY = FIXTURES / "policy-leastallocated.json"
CLUSTER = FIXTURES / "cluster.json"
GROUP = "scheduling.x-k8s.io/pod-group"
#: The session `record_session` sends: (path, fixture file).
SESSION = [("/filter", "filter-names.request.json"),
           ("/prioritize", "prioritize-names.request.json"),
           ("/filter", "filter-nodes.request.json"),
           ("/bind", "bind.request.json"),
           ("/prioritize", "prioritize-names.request.json"),
           ("/preempt", "preempt-meta.request.json"),
           ("/preempt", "preempt-full.request.json")]


def record_session(directory: Path) -> tuple[Path, list[tuple[int, bytes]]]:
    """Record `SESSION` (plus a body that is not JSON) against the fixture cluster; the
    recording and the replies the client got."""
    args = serve_args("--snapshot", str(CLUSTER), "--policy", str(POLICY), "--record",
                      str(directory), "--offload-bytes", "20000")

    async def run() -> list[tuple[int, bytes]]:
        replies = []
        async with served(args) as (client, _):
            for path, name in SESSION:
                response = await client.post(path, content=fixture_bytes(name))
                replies.append((response.status_code, response.content))
            response = await client.post("/filter", content=b"\xff not json")
            replies.append((response.status_code, response.content))
        return replies

    replies = asyncio.run(run())
    return directory / "recording-1.jsonl", replies


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, bytes]]]:
    return record_session(tmp_path_factory.mktemp("record"))


def rewrite(source: Path, target: Path,
            change: Callable[[list[recording.Entry]], list[recording.Entry]]) -> Path:
    rec = recording.read(source)
    lines = [recording.encode(rec.header), *map(recording.encode, change(list(rec.entries)))]
    target.write_bytes(b"".join(lines))
    return target


def loaded_node(entry: recording.Entry, name: str) -> bool:
    return (isinstance(entry, recording.Load) and entry.kind == "Node"
            and msgspec.json.decode(entry.object)["metadata"]["name"] == name)


# ---- the recording itself ---------------------------------------------------------------------
def test_recording_holds_the_exact_bytes_in_order(session) -> None:
    path, replies = session
    rec = recording.read(path)
    exchanges = list(recording.iter_exchanges(rec))
    sent = [fixture_bytes(name) for _, name in SESSION] + [b"\xff not json"]
    assert [recording.body_bytes(i) for i, _ in exchanges] == sent
    assert [(o.status, recording.body_bytes(o)) for _, o in exchanges] == replies
    assert [i.verb for i, _ in exchanges] == ["filter", "prioritize", "filter", "bind",
                                              "prioritize", "preempt", "preempt", "filter"]
    # Not UTF-8: kept as base64, and still the exact bytes.
    assert exchanges[-1][0].body is None and exchanges[-1][0].body_base64 == "/yBub3QganNvbg=="
    header = rec.header
    assert (header.mode, header.policy, header.policy_source) == (
        "snapshot", POLICY.read_text(), str(POLICY))
    assert header.flags.offload_bytes == 20000 and header.flags.reply_cache == REPLIES_PER_LIST
    # The snapshot's objects first, in load order, then the exchanges; the bind's answer
    # between its request and its reply.
    loads = [e for e in rec.entries if isinstance(e, recording.Load)]
    assert [e.kind for e in loads] == [kind for kind, _ in typed_objects(CLUSTER)]
    kinds = [type(e).__name__ for e in rec.entries if not isinstance(e, recording.Load)]
    assert kinds[6:9] == ["In", "Bind", "Out"]
    times = [e.t for e in rec.entries]
    assert times == sorted(times)


def test_typed_objects_decode_back_to_the_identical_struct() -> None:
    for kind, typed in typed_objects(CLUSTER):
        model = registry.KINDS[kind]
        as_model = msgspec.convert(msgspec.to_builtins(typed), model)
        assert k8s.decoder(model).decode(raw(typed)) == as_model


# ---- replay ---------------------------------------------------------------------------------
def test_replay_of_a_session_matches_byte_for_byte(session) -> None:
    path, replies = session
    report = replay_file(path)
    assert report.ok, report.summary()
    assert report.compared == len(replies) == 8
    assert report.skipped == []


def test_a_corrupted_state_change_is_reported_at_the_first_exchange_it_changes(
        session, tmp_path: Path) -> None:
    path, _ = session

    def shrink(entries: list[recording.Entry]) -> list[recording.Entry]:
        out = []
        for entry in entries:
            if loaded_node(entry, "worker-a2"):
                obj = msgspec.json.decode(entry.object)
                obj["status"]["allocatable"]["cpu"] = "1"
                entry = msgspec.structs.replace(entry, object=msgspec.Raw(msgspec.json.encode(obj)))
            out.append(entry)
        return out

    report = replay_file(rewrite(path, tmp_path / "recording-1.jsonl", shrink))
    assert not report.ok
    first = report.mismatches[0]
    assert first.id == 1
    assert str(first).startswith("exchange 1: POST /filter, pod default/api-7d9f: reply differs")
    assert "Insufficient cpu" in str(first)


def test_a_dropped_state_change_is_reported(session, tmp_path: Path) -> None:
    path, _ = session
    report = replay_file(rewrite(path, tmp_path / "recording-1.jsonl", lambda entries: [
        e for e in entries if not loaded_node(e, "worker-a1")]))
    assert [m.id for m in report.mismatches][:2] == [1, 2]
    assert "exchange 2: POST /prioritize, pod default/api-7d9f" in str(report.mismatches[1])


def test_a_dropped_binder_answer_leaves_the_bind_unanswered(session, tmp_path: Path) -> None:
    path, _ = session
    report = replay_file(rewrite(path, tmp_path / "recording-1.jsonl", lambda entries: [
        e for e in entries if not isinstance(e, recording.Bind)]))
    assert str(report.mismatches[0]) == (
        "exchange 4: POST /bind, pod default/api-7d9f to worker-a2: no reply where the "
        "recording has one (still held or waiting)")
    # Without the assumption the second prioritize scores worker-a2 as before the bind.
    assert report.mismatches[1].id == 5


def test_a_change_moved_after_the_request_that_saw_it_is_reported(session,
                                                                  tmp_path: Path) -> None:
    path, _ = session

    def late_bind(entries: list[recording.Entry]) -> list[recording.Entry]:
        # The bind's request, answer and reply moved after the second prioritize.
        bind = [e for e in entries if getattr(e, "id", None) == 4 or isinstance(e, recording.Bind)]
        rest = [e for e in entries if e not in bind]
        at = next(i for i, e in enumerate(rest) if isinstance(e, recording.Out) and e.id == 5)
        return rest[:at + 1] + bind + rest[at + 1:]

    report = replay_file(rewrite(path, tmp_path / "recording-1.jsonl", late_bind))
    assert [m.id for m in report.mismatches] == [5]
    # Scored as before the bind (7), not after it (5).
    assert 'recorded …b\',"Score":3},{"Host":"worker-a2","Score":5}]\'…, replayed …b\',' \
        '"Score":3},{"Host":"worker-a2","Score":7}]\'…' in str(report.mismatches[0])


def test_a_truncated_last_line_is_flagged_not_fatal(session, tmp_path: Path) -> None:
    path, _ = session
    cut = tmp_path / "recording-1.jsonl"
    cut.write_bytes(path.read_bytes()[:-20])
    report = replay_file(cut)
    assert report.ok
    assert report.skipped[-1].startswith("the last line was cut short")
    assert any("the recording ends before its reply" in s for s in report.skipped)


# ---- gang binds: held at Permit, answered concurrently, on the recorded clock ----------------
def gang_snapshot(tmp_path: Path, members: int, min_member: int = 2) -> Path:
    objects = [node("n1", allocatable={"cpu": "8", "memory": "8Gi", "pods": "110"}),
               {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "metadata": {"name": "pg", "namespace": "default", "uid": "uid-pg"},
                "spec": {"minMember": min_member}},
               *(pod(f"m{i}", labels={GROUP: "pg"}, requests={"cpu": "1"})
                 for i in range(members))]
    path = tmp_path / "gang.json"
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": objects}))
    return path


def gang_policy(tmp_path: Path, permit_wait: int) -> Path:
    path = tmp_path / "gang-policy.yaml"
    path.write_text(f"""
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{{name: NodeResourcesFit}}, {{name: Coscheduling}}]
pluginConfig:
  - name: Coscheduling
    args: {{permitWaitingTimeSeconds: {permit_wait}, podGroupBackoffSeconds: 0}}
""")
    return path


def bind_body(name: str) -> bytes:
    return json.dumps({"PodName": name, "PodNamespace": "default", "PodUID": f"uid-default-{name}",
                       "Node": "n1"}).encode()


async def until(condition: Callable[[], Any]) -> None:
    """Poll a condition of the app on its own loop (each turn lets the app run)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


def test_held_gang_binds_replay_concurrently(tmp_path: Path) -> None:
    args = serve_args("--snapshot", str(gang_snapshot(tmp_path, 2)), "--policy",
                      str(gang_policy(tmp_path, 30)), "--record", str(tmp_path / "rec"))

    async def run() -> list[bytes]:
        async with served(args) as (client, runtime):
            first = asyncio.ensure_future(client.post("/bind", content=bind_body("m0")))
            await until(lambda: runtime.binder.held_count() == 1)  # type: ignore[attr-defined]
            second = await client.post("/bind", content=bind_body("m1"))
            return [(await first).content, second.content]

    assert asyncio.run(run()) == [b'{"Error":""}', b'{"Error":""}']
    rec = recording.read(tmp_path / "rec" / "recording-1.jsonl")
    order = [(type(e).__name__, getattr(e, "id", getattr(e, "name", ""))) for e in rec.entries
             if not isinstance(e, recording.Load)]
    # m0's bind is held until m1's comes: both requests before any answer.
    assert order[:2] == [("In", 1), ("In", 2)]
    report = replay_file(rec.path)
    assert report.ok and report.compared == 2, report.summary()


def test_permit_timeout_replays_on_the_recorded_clock(tmp_path: Path) -> None:
    # Held for the group's wait (1 s); kube-scheduler's httpTimeout outlasts it (1 + 0.5 + 2).
    args = serve_args("--snapshot", str(gang_snapshot(tmp_path, 2)), "--policy",
                      str(gang_policy(tmp_path, 1)), "--record", str(tmp_path / "rec"),
                      "--scheduler-http-timeout", "3.5", "--bind-deadline", "0.5")

    async def run() -> bytes:
        async with served(args) as (client, _):
            return (await client.post("/bind", content=bind_body("m0"))).content

    reply = asyncio.run(run())
    assert reply == (b'{"Error":"pod default/m0 rejected at Permit: rejected due to timeout '
                     b'after waiting 1s at plugin Coscheduling"}')
    path = tmp_path / "rec" / "recording-1.jsonl"
    assert replay_file(path).ok
    entries = recording.read(path).entries
    assert [type(e).__name__ for e in entries if not isinstance(e, recording.Load)] == [
        "In", "PermitTimeout", "Out"]
    # The hold times out in the replay where, and only where, the recording says its timer
    # fired: without that entry the bind is still held when the recording ends.

    def no_timeout(entries: list[recording.Entry]) -> list[recording.Entry]:
        return [e for e in entries if not isinstance(e, recording.PermitTimeout)]

    report = replay_file(rewrite(path, tmp_path / "no-timeout.jsonl", no_timeout))
    assert [str(m) for m in report.mismatches] == [
        "exchange 1: POST /bind, pod default/m0 to n1: no reply where the recording has one "
        "(still held or waiting)"]


def answered_or_held(reply: asyncio.Future[Any], runtime: Runtime, uid: str) -> bool:
    binder: Any = runtime.binder
    return reply.done() or any(uid in group for group in binder.held.values())


def record_rejected_holds(tmp_path: Path, reject: Callable[[Runtime], None],
                          after: list[str]) -> tuple[list[bytes], Path]:
    """m0's bind held at Permit, `reject` called as serve calls it, then the binds of `after`
    sent one by one; the replies and the recording."""
    args = serve_args("--snapshot", str(gang_snapshot(tmp_path, 2)), "--policy",
                      str(gang_policy(tmp_path, 30)), "--record", str(tmp_path / "rec"))

    async def run() -> list[bytes]:
        async with served(args) as (client, runtime):
            held = asyncio.ensure_future(client.post("/bind", content=bind_body("m0")))
            await until(lambda: runtime.binder.held_count() == 1)  # type: ignore[attr-defined]
            reject(runtime)
            replies = [(await held).content]
            later = []
            for name in after:
                reply = asyncio.ensure_future(client.post("/bind", content=bind_body(name)))
                # Held (or answered) before the next comes, so the order is the test's.
                await until(partial(answered_or_held, reply, runtime, f"uid-default-{name}"))
                later.append(reply)
            replies.extend([(await reply).content for reply in later])
            return replies

    replies = asyncio.run(run())
    return replies, tmp_path / "rec" / "recording-1.jsonl"


def test_binds_released_at_shutdown_replay_with_their_replies(tmp_path: Path) -> None:
    # `serve` stopping (SIGTERM) answers the held bind and refuses to hold m1's after it.
    replies, path = record_rejected_holds(tmp_path, serve.stop_holding, ["m1"])
    assert replies == [
        b'{"Error":"pod default/m0 rejected at Permit: this extender is shutting down"}',
        b'{"Error":"pod default/m1 rejected at Permit: this extender is shutting down"}']
    entries = [e for e in recording.read(path).entries if not isinstance(e, recording.Load)]
    assert [recording.record_name(e) for e in entries] == [
        "in", "reject-held", "out", "in", "out"]
    assert entries[1] == recording.RejectHeld(t=entries[1].t, w=entries[1].w,
                                              reason="this extender is shutting down",
                                              stop=True)
    report = replay_file(path)
    assert report.ok and report.compared == 2 and report.skipped == [], report.summary()


def test_binds_released_by_a_replica_that_stopped_leading_replay_with_their_replies(
        tmp_path: Path) -> None:
    # Unlike a shutdown, the replica holds binds again after: m0 retried and m1 then bind.
    replies, path = record_rejected_holds(tmp_path, serve.stopped_leading, ["m0", "m1"])
    assert replies == [
        b'{"Error":"pod default/m0 rejected at Permit: this extender replica stopped leading"}',
        b'{"Error":""}', b'{"Error":""}']
    rejections = [e for e in recording.read(path).entries
                  if isinstance(e, recording.RejectHeld)]
    assert [(e.reason, e.stop) for e in rejections] == [
        ("this extender replica stopped leading", False)]
    report = replay_file(path)
    assert report.ok and report.compared == 3 and report.skipped == [], report.summary()


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(3))
def test_holds_timing_out_in_one_turn_replay_as_they_happened(tmp_path: Path,
                                                               attempt: int) -> None:
    # Two of a group of three held with the same wait, from the same turn of the loop: their
    # timers fire together (both answer the timeout) or one after the other (the second is
    # rejected in Unreserve by the first), as the loop has it. The replay gives what happened.
    args = serve_args("--snapshot", str(gang_snapshot(tmp_path, 3, min_member=3)), "--policy",
                      str(gang_policy(tmp_path, 1)), "--record", str(tmp_path / "rec"),
                      "--scheduler-http-timeout", "3.5", "--bind-deadline", "0.5")

    async def run() -> list[bytes]:
        async with served(args) as (client, _):
            replies = await asyncio.gather(*(client.post("/bind", content=bind_body(m))
                                             for m in ("m0", "m1")))
            return [r.content for r in replies]

    replies = asyncio.run(run())
    assert all(b"rejected at Permit" in r for r in replies), replies
    path = tmp_path / "rec" / "recording-1.jsonl"
    timeouts = [e for e in recording.read(path).entries
                if isinstance(e, recording.PermitTimeout)]
    assert 1 <= len(timeouts) <= 2
    assert sum(b"rejected due to timeout" in r for r in replies) == len(timeouts)
    report = replay_file(path)
    assert report.ok, [str(m) for m in report.mismatches]


# ---- recording never costs or breaks a verb -----------------------------------------------------
def test_without_a_recorder_the_routes_are_the_plain_ones(runtime: Runtime) -> None:
    app = create_app(runtime)
    endpoints = {r.path: r.endpoint for r in app.routes if r.path in ("/filter", "/bind")}
    assert {e.__qualname__ for e in endpoints.values()} == {"verb_route.<locals>.route"}


class _BrokenFile:
    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_write_error_stops_recording_once_and_the_verbs_go_on(
        runtime: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder(_BrokenFile(), tmp_path / "recording-1.jsonl",  # type: ignore[arg-type]
                        runtime.state)
    runtime.recorder = recorder
    app = create_app(runtime)

    async def run() -> list[int]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                codes = []
                for _ in range(3):
                    response = await client.post(
                        "/filter", content=fixture_bytes("filter-names.request.json"))
                    codes.append(response.status_code)
                return codes

    with caplog.at_level(logging.ERROR, logger="extender.state.recorder"):
        assert asyncio.run(run()) == [200, 200, 200]
    assert not recorder.active
    stops = [r for r in caplog.records if r.getMessage().startswith("recording stopped")]
    assert len(stops) == 1
    assert "No space left on device" in stops[0].getMessage()


def test_a_recorder_that_falls_behind_stops_instead_of_growing(runtime: Runtime,
                                                               tmp_path: Path) -> None:
    with (tmp_path / "r.jsonl").open("wb") as file:
        recorder = Recorder(file, tmp_path / "r.jsonl", runtime.state, max_pending=2)
        for _ in range(3):  # not started: nothing drains the queue
            recorder.metrics(None)
        assert not recorder.active
        recorder.close()


def test_replay_reports_are_readable(session) -> None:
    path, _ = session
    report = asyncio.run(replay(recording.read(path)))
    assert isinstance(report, ReplayReport)
    assert report.summary() == f"{path}: 8 replies compared, 0 mismatch(es), 0 skipped"
