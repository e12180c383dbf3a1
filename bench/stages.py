"""Where a request's time goes, stage by stage, on the traffic kube-scheduler sends.

    python -m bench.stages                  # 5000 nodes, 500 cycles, the 4-filter policy
    python -m bench.stages --nodes 500 --cycles 300 --policy default

The server (`extender serve`, in its own process, on one CPU) runs with timers wrapped around
the functions each stage ends in; the client sends `bench.traffic`'s cycles (a distinct pod,
kube-scheduler's rotating NodeNames window, prioritize on what passed, a bind) from another
CPU, then `--preempts` preempt calls (a distinct preemptor each, with a window's worth of
candidates as kube-scheduler's dry run finds them: `bench.proposals`). Per verb it prints
each stage's median and mean in µs:

* **read**: from the request's first bytes to its body complete (the HTTP parser's work);
* **queue**: from there to its answer starting (scheduling it on the event loop);
* the answer, and inside it: **state sync** (copying the table rows a bind changed),
  **split**/**decode** (a remembered list at the body's end, the head decoded),
  **pod view** (recognised, rebound from a replica, or built), **names → rows**
  (a new list's names resolved), **proposals** (preempt's victims read), **prefilter**,
  **filter plugins**, **score plugins**, **victims** (preemption's work), **reply**
  (encoding it), **bind** (the binder), **metrics** (the request's record);
* **write**: the response encoded and written;
* **after the reply**: a filter's bookkeeping once its reply is written (rejections counted,
  the reply kept for reuse, the passing nodes remembered as a list), `prepared ahead` included;
* **prepared ahead**: a prioritize reply prepared once its pod's filter was answered
  (`serve`'s anticipation), in the prioritize column with the score plugins and reply it ran:
  not part of that prioritize's answer, but time the server spent before it could answer (this
  client sends the prioritize at once, where kube-scheduler first runs its own scorers);
* **outside the server**: the client's observed median minus the server's (the client,
  the kernel and the loopback: what the floor of `bench.traffic` measures).

Stages nest (the answer holds the others), so a verb's stages do not add up to its total; each
wrapped function costs about 1 µs more timed than not. A request the protocol does not answer
directly (a body over 64 KiB: preempt beyond ~350 proposed nodes) has its inner stages timed,
not its read, queue, answer and write. Results go to stdout as Markdown.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import generate, proposals, traffic
from bench.run import HOST, _pythonpath, cpu_plan, free_port, spawn, wait_ready
from extender import cliargs

#: (module, attribute, stage): each wrapped function's calls are timed as that stage.
WRAPPED = [
    ("extender.engine.nodetable", "NodeTable.sync", "state sync"),
    ("extender.api.reading", "_after_known_list", "split + decode"),
    ("extender.api.reading", "pod_from_raw", "pod view"),
    ("extender.api.reading", "_candidates", "names → rows"),
    ("extender.api.filter", "prepare_filters", "prefilter"),
    ("extender.api.filter", "filter_rows", "filter plugins"),
    ("extender.api.prioritize", "score_rows", "score plugins"),
    ("extender.api.rowreply", "RowReplies.filter_reply", "reply"),
    ("extender.api.rowreply", "RowReplies.prioritize_reply", "reply"),
    ("extender.api.bind", "decode", "decode"),
    ("extender.api.bind", "events_of", "events"),
    ("extender.state.binder", "SnapshotBinder.bind", "bind"),
    ("extender.api.preempt", "decode", "decode"),
    ("extender.api.preempt", "replica_pod_view", "pod view"),
    ("extender.api.preempt", "flat_proposals", "proposals"),
    ("extender.api.preempt", "process_preemption_batch", "victims"),
    ("extender.api.preempt", "finish", "reply"),
    ("extender.api.observe", "RequestRecord.finish", "metrics"),
    ("extender.api.filter", "_after_reply", "after the reply"),
]
ORDER = ["read", "queue", "answer", "state sync", "split + decode", "decode", "pod view",
         "names → rows", "proposals", "prefilter", "filter plugins", "score plugins", "victims",
         "reply", "bind", "events", "metrics", "write", "after the reply", "prepared ahead",
         "server", "client", "outside the server"]
VERBS = ("filter", "prioritize", "bind", "preempt")


# --------------------------------------------------------------------------- in the server

class Timings:
    """Durations by (verb, stage), the verb being the path of the request in flight."""

    def __init__(self) -> None:
        self.by: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
        self.verb = "?"

    def add(self, stage: str, seconds: float) -> None:
        self.by[(self.verb, stage)].append(seconds)

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps({f"{v}\t{s}": d for (v, s), d in self.by.items()}))


def _timed(timings: Timings, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def awaited(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                timings.add(stage, time.perf_counter() - started)
        return awaited

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            timings.add(stage, time.perf_counter() - started)
    return timed


def _tagged(timings: Timings, verb: str, handle: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handle)
    async def tagged(*args: Any, **kwargs: Any) -> Any:
        timings.verb = verb
        return await handle(*args, **kwargs)
    return tagged


def instrument(timings: Timings) -> None:
    """Wrap `WRAPPED` and the protocol's steps (`api.protocol`, `api.direct`) with timers."""
    import importlib

    from extender.api import protocol

    for module_name, attribute, stage in WRAPPED:
        module = importlib.import_module(module_name)
        owner, _, name = attribute.rpartition(".")
        target = getattr(module, owner) if owner else module
        setattr(target, name, _timed(timings, stage, getattr(target, name)))

    # The verb in flight, for the stages inside an answer: set by each verb's handler, so that
    # a request the protocol does not answer directly (a body over 64 KiB: preempt at 5 000
    # nodes) is counted as its own verb too (its read, queue and write are then not timed).
    for verb in VERBS:
        module = importlib.import_module(f"extender.api.{verb}")
        module.handle = _tagged(timings, f"/{verb}", module.handle)  # type: ignore[attr-defined]

    # A prioritize prepared ahead (`api.prioritize.anticipate_prioritize`) is prioritize's work,
    # done between the filter's reply and the prioritize.
    from extender.api import prioritize

    prepare = prioritize._anticipate

    def anticipate(*args: Any) -> None:
        previous, timings.verb = timings.verb, "/prioritize"
        started = time.perf_counter()
        try:
            prepare(*args)
        finally:
            timings.add("prepared ahead", time.perf_counter() - started)
            timings.verb = previous

    prioritize._anticipate = anticipate  # type: ignore[assignment]

    cls = protocol.GuardedHttpToolsProtocol
    received, complete, read_directly = cls.data_received, cls.on_message_complete, \
        cls._read_directly
    reply_directly = cls._reply_directly

    def data_received(self: Any, data: bytes) -> None:
        if getattr(self, "_stage_started", None) is None:
            self._stage_started = time.perf_counter()
        received(self, data)

    def _read_directly(self: Any) -> bool:
        taken: bool = read_directly(self)
        if taken:
            timings.verb = self.url.decode()
        return taken

    def on_message_complete(self: Any) -> None:
        if self._reading is not None:
            self._stage_read = time.perf_counter()
            timings.add("read", self._stage_read - self._stage_started)
        complete(self)

    async def _reply_directly(self: Any, cycle: Any, pending: Any) -> None:
        started = time.perf_counter()
        timings.verb = self.url.decode()
        timings.add("queue", started - self._stage_read)

        async def answer() -> Any:
            response = await pending
            self._stage_answered = time.perf_counter()
            timings.add("answer", self._stage_answered - started)
            return response

        await reply_directly(self, cycle, answer())
        finished = time.perf_counter()
        timings.add("write", finished - self._stage_answered)
        timings.add("server", finished - self._stage_started)
        self._stage_started = None

    cls.data_received = data_received  # type: ignore[method-assign]
    cls._read_directly = _read_directly  # type: ignore[method-assign]
    cls.on_message_complete = on_message_complete  # type: ignore[method-assign]
    cls._reply_directly = _reply_directly  # type: ignore[method-assign]


def server_main(out: Path, argv: list[str]) -> int:
    import uvicorn

    from extender.cli import main as extender_main

    timings = Timings()
    instrument(timings)
    # Written once the server has shut down: uvicorn then raises the SIGTERM it caught again,
    # and the process ends without running `atexit`.
    shutdown = uvicorn.Server.shutdown

    async def shutdown_and_write(self: uvicorn.Server, *args: Any, **kwargs: Any) -> None:
        await shutdown(self, *args, **kwargs)
        timings.dump(out)

    uvicorn.Server.shutdown = shutdown_and_write  # type: ignore[method-assign]
    return extender_main(argv)


# --------------------------------------------------------------------------- the client

def measure(nodes: int, cycles: int, warmup: int, policy: Path, seed: int, workdir: Path,
            preempts: int = 0, percentage: int = 0,
            gap: float = 0.0) -> dict[str, dict[str, list[float]]]:
    """Run the cycles (their windows as kube-scheduler's `percentageOfNodesToScore`, 0:
    adaptive, gives them), then `preempts` preempt calls, against an instrumented server:
    durations in seconds by verb and stage (each verb's first `warmup` left out), the client's
    own as `client`."""
    spec = generate.ClusterSpec(nodes, nodes * traffic.PODS_PER_NODE, generate.DEFAULT_SEED)
    snapshot = workdir / f"cluster-{nodes}.json"
    if not snapshot.exists():
        generate.write_cluster(snapshot, spec)
    out = workdir / "stages.json"
    port = free_port()
    server_cpu, client_cpu = cpu_plan()
    cmd = [sys.executable, "-m", "bench.stages", "--server", str(out), "serve", "--host", HOST,
           "--port", str(port), "--snapshot", str(snapshot), "--policy", str(policy)]
    server = spawn(cmd, snapshot, port, workdir / "server-stages.log", server_cpu,
                   {**os.environ, "PYTHONPATH": _pythonpath()})
    try:
        wait_ready(server, 900.0)
        if client_cpu is not None:
            os.sched_setaffinity(0, {client_cpu})
        target = traffic.Target("ours", server, binds=True, gap=gap)
        names = [generate.node_name(i) for i in range(nodes)]
        pods = traffic.pending_pods(seed, warmup + cycles)
        # The nodes kube-scheduler's filters pass, as `bench.traffic` sends them; naming every
        # node (percentage 100), the full list.
        feasible = None if percentage >= 100 else traffic.feasible_nodes(snapshot, pods, names)
        plan = traffic.windows(names, warmup + cycles, seed, percentage=percentage,
                               feasible=feasible)
        for pod, window in zip(pods, plan, strict=True):
            traffic.cycle(target, pod, window)
        if preempts:
            # Candidates as the adaptive window's worth, whatever `percentage` the filters
            # used: kube-scheduler's `numCandidates` does not follow it.
            wanted = traffic.num_feasible_nodes_to_find(nodes)
            for body in proposals.dry_run_bodies(snapshot, target.bound, seed,
                                                 warmup + preempts, wanted):
                elapsed, _ = target.post("/preempt", body)
                target.times["preempt"].append(elapsed)
        target.conn.close()
    finally:
        server.stop()
    if not out.exists():
        raise RuntimeError(f"the server wrote no timings:\n{server.log_tail()}")
    raw = json.loads(out.read_text())
    found: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for key, durations in raw.items():
        verb, stage = key.split("\t")
        if verb.startswith("/"):
            # The first `warmup` requests of each verb are left out, as the client's are.
            found[verb[1:]][stage] = durations[warmup:] if stage != "state sync" else \
                durations[2 * warmup:]
    for verb in VERBS:
        if target.times[verb]:
            found[verb]["client"] = target.times[verb][warmup:]
    return found


def table(found: dict[str, dict[str, list[float]]]) -> str:
    verbs = [v for v in VERBS if v in found]
    lines = ["| stage | " + " | ".join(f"{v} p50 / mean (µs)" for v in verbs) + " |",
             "|---|" + "---|" * len(verbs)]
    for stage in ORDER:
        cells = []
        for verb in verbs:
            stages = found[verb]
            if stage == "outside the server":
                if stages.get("client") and stages.get("server"):
                    outside = statistics.median(stages["client"]) - statistics.median(stages["server"])
                    cells.append(f"{outside * 1e6:.0f}")
                else:
                    cells.append("—")
                continue
            durations = stages.get(stage)
            if not durations:
                cells.append("—")
                continue
            cells.append(f"{statistics.median(durations) * 1e6:.0f} / "
                         f"{statistics.fmean(durations) * 1e6:.0f}")
        if any(cell != "—" for cell in cells):
            label = stage if stage in ("read", "queue", "answer", "write", "after the reply",
                                       "prepared ahead", "server", "client",
                                       "outside the server") \
                else f"· {stage}"
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--server"]:
        return server_main(Path(args[1]), args[2:])
    p = argparse.ArgumentParser(prog="python -m bench.stages",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=cliargs.positive_int, default=5000,
                   help="nodes of the generated cluster (default 5000; 100 runs in seconds)")
    p.add_argument("--cycles", type=cliargs.positive_int, default=500,
                   help="measured filter, prioritize and bind cycles (default 500)")
    p.add_argument("--warmup", type=cliargs.count, default=20,
                   help="each verb's first calls, left out (default 20)")
    p.add_argument("--preempts", type=cliargs.count, default=100,
                   help="preempt calls after the cycles, each a distinct preemptor with a "
                        "window's worth of proposed nodes (default 100; 0: none)")
    p.add_argument("--policy", choices=["yardstick", "default"], default="yardstick",
                   help="yardstick: the Go yardstick's work (4 filters + LeastAllocated); "
                        "default: every default plugin")
    p.add_argument("--seed", type=int, default=None, help="the pods' seed (default: fresh each run)")
    p.add_argument("--percentage-of-nodes-to-score", type=cliargs.percentage, default=0, metavar="P",
                   help="the windows kube-scheduler sends at this setting (default 0, "
                        "adaptive; 100: every node named)")
    p.add_argument("--gap", type=cliargs.non_negative_float, default=0.0, metavar="MS",
                   help="milliseconds at least between a reply and the next request, as "
                        "kube-scheduler's own plugins take between its calls (default 0)")
    opts = p.parse_args(args)
    policy = traffic.POLICIES["ours" if opts.policy == "yardstick" else "ours-default"]
    seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "big")
    with tempfile.TemporaryDirectory(prefix="bench-stages-") as tmp:
        found = measure(opts.nodes, opts.cycles, opts.warmup, policy, seed, Path(tmp),
                        opts.preempts, opts.percentage_of_nodes_to_score, opts.gap / 1000)
    window = traffic.num_feasible_nodes_to_find(opts.nodes, opts.percentage_of_nodes_to_score)
    waits = f", at least {opts.gap:g} ms between a reply and the next request" if opts.gap else ""
    print(f"{opts.nodes} nodes, window {window}, "
          f"{opts.cycles} cycles, policy {opts.policy}{waits}\n")
    print(table(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
