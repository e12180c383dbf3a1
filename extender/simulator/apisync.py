"""The sync query and the `--serve-api` wiring: `ExtenderSync` asks every extender
`GET <urlPrefix>/readyz?resourceVersion=N` before each scheduling cycle until it has observed
the published cluster (bounded: `--extender-start-timeout` first, then
`--extender-sync-timeout`; past it `SyncError`), and `ServedCluster` starts the `ApiServer`,
writes the kubeconfig and publishes and waits in `before_cycle(sim)`. `docs/operations.md`
("Sync query") documents the contract; `extender.api.sync` implements it."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from extender.simulator.apimirror import ClusterMirror
from extender.simulator.apiserver import (
    DEFAULT_HISTORY,
    SYNC_HEADER,
    SYNC_PATH,
    ApiServer,
    SyncError,
)


@dataclass(slots=True)
class _Answer:
    status: int | None  # None: no answer (connection refused, timeout)
    text: str
    observed: str = ""


class ExtenderSync:
    """Waits until extenders have observed a resourceVersion, through their sync query:
    `GET <urlPrefix>/readyz?resourceVersion=N&timeoutSeconds=S` answers 200 with an
    `Observed-Resource-Version: M` header (M ≥ N) once every informer of the extender has
    applied the events up to N, 503 until then (held up to S seconds first), 400 when it
    cannot (an extender serving a snapshot, which watches nothing).

    The first wait of each extender is bounded by `start_timeout` (the time to start it
    against the kubeconfig), each later one by `timeout`; a version already confirmed is not
    asked again."""

    def __init__(self, url_prefixes: Sequence[str], *, start_timeout: float = 120.0,
                 timeout: float = 30.0, client: httpx.Client | None = None,
                 hold: float = 1.0) -> None:
        self.urls = [u.rstrip("/") for u in url_prefixes]
        self.start_timeout = start_timeout
        self.timeout = timeout
        self.hold = hold  # seconds each query may be held by the extender
        self._client = client or httpx.Client(timeout=hold + 5.0)
        self._owns_client = client is None
        self.confirmed: dict[str, int] = {}  # url -> the newest version it observed
        self.queries = 0
        self.wait_seconds = 0.0

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def wait(self, version: int) -> None:
        started = time.monotonic()
        for url in self.urls:
            if self.confirmed.get(url, -1) >= version:
                continue
            first = url not in self.confirmed
            self._wait_one(url, version, self.start_timeout if first else self.timeout)
        self.wait_seconds += time.monotonic() - started

    def _ask(self, url: str, version: int, hold: float) -> _Answer:
        self.queries += 1
        try:
            resp = self._client.get(url + SYNC_PATH, params={
                "resourceVersion": str(version), "timeoutSeconds": f"{hold:g}"})
        except httpx.HTTPError as exc:
            return _Answer(None, f"{type(exc).__name__}: {exc}")
        return _Answer(resp.status_code, resp.text.strip()[:500], resp.headers.get(SYNC_HEADER, ""))

    def _wait_one(self, url: str, version: int, bound: float) -> None:
        deadline = time.monotonic() + bound
        pause = 0.001
        while True:
            asked = time.monotonic()
            hold = max(0.0, min(self.hold, deadline - asked))
            answer = self._ask(url, version, hold)
            if answer.status == 200:
                if not answer.observed:
                    raise SyncError(
                        f"the extender at {url} answered {SYNC_PATH}?resourceVersion={version} "
                        f"with 200 but without an {SYNC_HEADER} header: it does not implement "
                        "the sync query (docs/operations.md, \"Sync query\"), so the simulator "
                        "cannot know what it has seen")
                observed = int(answer.observed) if answer.observed.isdigit() else version
                self.confirmed[url] = max(observed, version)
                return
            if answer.status is not None and answer.status not in (429, 503):
                raise SyncError(f"the extender at {url} cannot follow the simulated cluster: "
                                f"{SYNC_PATH}?resourceVersion={version} answered "
                                f"{answer.status}: {answer.text}")
            if time.monotonic() >= deadline:
                last = (f"{answer.status}: {answer.text}" if answer.status is not None
                        else f"no answer ({answer.text})")
                raise SyncError(
                    f"the extender at {url} did not observe the simulated cluster's "
                    f"resourceVersion {version} within {bound:g}s (last answer: {last}); is it "
                    "running with --kubeconfig pointing at the simulator's kubeconfig?")
            # Not listening yet (being started), or answering at once without holding the
            # query: pause before asking again (a holding extender is asked again at once).
            if answer.status is None or time.monotonic() - asked < hold / 2:
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, 0.25)


class ServedCluster:
    """`--serve-api`: the API server, its kubeconfig, and the per-cycle publish and sync.

    Use as a context manager around the run; `before_cycle` is the simulation's hook."""

    def __init__(self, cluster: str | Path | None, kubeconfig: str | Path, *,
                 extenders: Sequence[str] = (), port: int = 0,
                 start_timeout: float = 120.0, sync_timeout: float = 30.0,
                 history: int = DEFAULT_HISTORY) -> None:
        self.api = ApiServer(port=port, history=history)
        self.mirror = ClusterMirror(self.api, cluster)
        self.kubeconfig = Path(kubeconfig)
        self.sync = ExtenderSync(extenders, start_timeout=start_timeout, timeout=sync_timeout)
        self.publishes = 0

    def __enter__(self) -> ServedCluster:
        self.api.start()
        try:
            self.api.write_kubeconfig(self.kubeconfig)
        except OSError:
            self.api.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.sync.close()
        self.api.stop()

    def publish(self, sim: Any) -> int:
        self.publishes += 1
        version = self.mirror.publish(sim)
        if self.mirror.warnings:
            sim.warnings.extend(f"--serve-api: {w}" for w in self.mirror.warnings)
            self.mirror.warnings.clear()
        return version

    def before_cycle(self, sim: Any) -> None:
        """Publish the cluster as it is now, then wait until every extender observed it."""
        version = self.publish(sim)
        if self.sync.urls:
            self.sync.wait(version)


def unsynced_warning(url: str) -> str:
    """The report's warning for an extender in the loop without `--serve-api`."""
    return (f"the extender at {url} was told only of binds (with --extender-bind): it does not "
            "see arrivals, evictions, deletions or node events, so its answers may be about "
            "another cluster; --serve-api FILE serves the simulated cluster for it to watch "
            "(extender serve --kubeconfig FILE) and waits for it before each cycle")


def serve_for_cli(stack: contextlib.ExitStack, args: Any, config: Any,
                  extenders: Sequence[str]) -> ServedCluster | None:
    """`extender simulate --serve-api FILE`: start the API, write FILE, hook the per-cycle
    publish and sync into `config`, and say what to run. None (after a message) when the
    server cannot start or FILE cannot be written."""
    from extender.simulator.clock import SECOND

    served = ServedCluster(args.cluster, args.serve_api, extenders=extenders,
                           port=args.serve_api_port,
                           start_timeout=args.extender_start_timeout / SECOND,
                           sync_timeout=args.extender_sync_timeout / SECOND)
    try:
        stack.enter_context(served)
    except OSError as exc:
        print(f"extender simulate: --serve-api: {exc}", file=sys.stderr)
        return None
    config.before_cycle = served.before_cycle
    where = f"serving the simulated cluster at {served.api.url}, kubeconfig {args.serve_api}"
    if extenders:
        print(f"{where}; waiting up to {args.extender_start_timeout / SECOND:g}s for "
              f"{', '.join(extenders)} to observe it (extender serve --kubeconfig "
              f"{args.serve_api} --policy {args.policy} ...)", file=sys.stderr, flush=True)
    else:
        print(where, file=sys.stderr, flush=True)
    return served
