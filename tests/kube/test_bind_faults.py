"""200 binds against an API server that applies requests whose answers then go wrong (hang
after apply, 500 after apply, drop after apply, late apply) or fails on its own (500, 429,
drop, hang), as kube-scheduler's binding goroutines send them: concurrently, each retried once
after an error. Never a phantom error (a bind answered Error although its pod is bound to
that node), never a lost pod, never a double binding."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from extender.kube.client import KubeClient
from extender.kube.config import ClusterConfig
from extender.state.binder import ApiBinder, BindError
from tests.kube import kube_objects as ko
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.kube.kube_helpers import eventually, truth

PODS = 200
#: What happens to a binding POST, and how often (the rest are answered normally).
BINDING_FAULTS = (
    (0.08, dict(action="apply_then_hang", hang_seconds=6.0)),
    (0.08, dict(action="apply_then_status", status=500)),
    (0.08, dict(action="lose_response")),
    (0.04, dict(action="late_apply", status=504, delay=0.3)),
    (0.04, dict(action="late_apply", status=500, delay=1.5)),
    (0.04, dict(action="status", status=500)),
    (0.03, dict(action="status", status=429)),
    (0.03, dict(action="drop")),
    (0.03, dict(action="hang", hang_seconds=6.0)),
)
#: The pod reads the binder makes (after a conflict, and to confirm) fail too, now and then.
READ_FAULTS = (
    (0.05, dict(action="hang", hang_seconds=6.0)),
    (0.05, dict(action="status", status=500)),
)


def _inject(server: FakeApiServer, rng: random.Random, name: str) -> list[Fault]:
    """Faults for this pod's next few requests, drawn from the tables above."""
    injected = []
    for method, path, table in (("POST", f"/pods/{name}/binding", BINDING_FAULTS),
                                ("GET", f"/pods/{name}", READ_FAULTS)):
        for _attempt in range(3):
            roll, acc = rng.random(), 0.0
            for share, fault in table:
                acc += share
                if roll < acc:
                    injected.append(server.inject(Fault(method=method, path=path, **fault)))
                    break
    return injected


def _pods(server: FakeApiServer) -> dict[str, str | None]:
    """Each pod's node, as the server has it."""
    return {obj["metadata"]["name"]: obj.get("spec", {}).get("nodeName")
            for obj in list(server.objects["pods"].values())}


@pytest.mark.alone  # the faults race the bind deadline
@pytest.mark.slow
@pytest.mark.anyio
async def test_no_phantom_error_no_lost_pod_no_double_binding(
        apiserver: FakeApiServer, kube_config: ClusterConfig) -> None:
    rng = random.Random(2026)
    apiserver.put(ko.node("n1", cpu="1000", pods="1000"))
    uids = {f"p{i:03d}": apiserver.put(ko.pod(f"p{i:03d}", cpu="1"))["metadata"]["uid"]
            for i in range(PODS)}
    faults = [f for name in uids for f in _inject(apiserver, rng, name)]
    state = truth(apiserver)
    outcomes: Counter[str] = Counter()
    answers: dict[str, str | None] = {}

    async with KubeClient(kube_config, timeout=10.0) as client:
        binder = ApiBinder(client, state, deadline=4.0,
                            on_outcome=lambda outcome: outcomes.update([outcome]))

        async def bind(name: str) -> None:
            try:
                await binder.bind("default", name, uids[name], "n1")
                answers[name] = None
            except BindError as exc:
                answers[name] = str(exc)

        await asyncio.gather(*(bind(name) for name in uids))
        first_errors = {n for n, e in answers.items() if e is not None}
        await eventually(lambda: apiserver.late_pending == 0, what="every late apply")
        bound_now = {name for name, node in _pods(apiserver).items() if node == "n1"}
        phantom = first_errors & bound_now
        # kube-scheduler retries a pod whose bind failed (and drops one it sees bound).
        await asyncio.gather(*(bind(name) for name in first_errors - bound_now))

    final = _pods(apiserver)
    bindings = Counter(name for _, name, _, _ in apiserver.bindings)
    assert not phantom, {n: answers[n] for n in sorted(phantom)}
    assert all(node == "n1" for node in final.values()), "a pod was lost"
    assert max(bindings.values()) == 1 and set(bindings) == set(uids), "a double binding"
    print(f"\nfaults hit: {sum(f.hits for f in faults)} of {len(faults)}; outcomes "
          f"{dict(outcomes)}; "
f"errors answered {len(first_errors)} (phantom {len(phantom)})")
