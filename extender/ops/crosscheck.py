"""What no single file shows: kube-scheduler's configuration against the extender's policy,
and the extender's Deployment against both.

- A policy with Coscheduling holds a bind at Permit for up to the group's wait: the
  extender's `httpTimeout` in kube-scheduler's configuration must outlast it (the wait, the
  extender's `--bind-deadline` and 2 s, as `render-config --policy` writes), and the extender
  must be the binder (`bindVerb`), or the holds never happen.
- A policy with NodeResourceTopologyMatch's overreserve cache (`cacheResyncPeriodSeconds` > 0)
  reserves in the bind verb: without `bindVerb` its copy of each node's report never counts
  the pods kube-scheduler binds; with `discardReservedNodes` no node is ever discarded.
- A policy with Coscheduling, CapacityScheduling or that cache (or `discardReservedNodes`)
  keeps holds and reservations in one process: several extender replicas need
  `--leader-elect` (only the leader then answers), or they split a gang's binds and a quota's
  or a node's reservations between processes.

`check-config` runs these on a pair of files given together, and on rendered manifests
(`kubectl kustomize DIR | extender check-config -`: `schedconfig.check_manifests` finds the
ConfigMaps' files and the Deployments, and hands them here; whether the objects connect is
`wiring`'s).
"""

from __future__ import annotations

from typing import Any

from extender.ops.fields import format_go_duration, parse_go_duration
from extender.ops.problems import Collector
from extender.ops.wiring import LOOPBACK, flag_value

STATEFUL = ("Coscheduling", "CapacityScheduling")
DEFAULT_BIND_DEADLINE = 4.0


def overreserve_period(profile: Any) -> int | None:
    """NodeResourceTopologyMatch's `cacheResyncPeriodSeconds` in `profile` when its
    overreserve cache is on, else None."""
    from extender.state.nrtresync import cache_plugin

    plugin = cache_plugin(profile)
    return None if plugin is None else plugin.args.cache_resync_period_seconds


def stateful_plugins(profile: Any) -> list[str]:
    """The enabled plugins whose holds or reservations live in the extender's process."""
    from extender.engine.plugins.node_resource_topology import discards_reserved_nodes

    found = [n for n in profile.filter_names if n in STATEFUL]
    if overreserve_period(profile) is not None or discards_reserved_nodes(profile):
        found.append("NodeResourceTopologyMatch")
    return found


def check_pair(config: dict[str, Any], policy: Any, out: Collector, where: str = "",
               bind_deadline: float = DEFAULT_BIND_DEADLINE) -> None:
    """kube-scheduler's configuration `config` (parsed) against the extender's `policy`."""
    from extender.engine.plugins.coscheduling import permit_wait
    from extender.engine.plugins.node_resource_topology import discards_reserved_nodes
    from extender.engine.profile import build_profile
    from extender.state.permit import http_timeout_for

    profile = build_profile(policy)
    extenders = config.get("extenders") if isinstance(config.get("extenders"), list) else []
    binders = [(i, e) for i, e in enumerate(extenders) if isinstance(e, dict) and e.get("bindVerb")]
    stateful = stateful_plugins(profile)
    for i, extender in enumerate(extenders):
        if stateful and isinstance(extender, dict) and extender.get("ignorable") is True:
            out.error(f"{where}extenders[{i}].ignorable",
                      f"the extender's policy enables {' and '.join(stateful)}, whose gangs, "
                      "quotas and reservations only the extender keeps: kube-scheduler skips an "
                      "ignorable extender that fails or is down (its filter, and from 1.30 its "
                      "bind, binding the pod itself), so pods would bind outside them; set "
                      "ignorable: false")
    period = overreserve_period(profile)
    if period is not None and not binders:
        out.error(f"{where}extenders", "the extender's policy enables NodeResourceTopologyMatch's "
                  f"overreserve cache (cacheResyncPeriodSeconds {period}), which reserves in the "
                  "bind verb: register bindVerb, or its copy of each node's report never counts "
                  "the pods kube-scheduler binds")
    if discards_reserved_nodes(profile) and not binders:
        out.error(f"{where}extenders", "the extender's policy enables NodeResourceTopologyMatch's "
                  "discardReservedNodes, which learns of each bind from the bind verb: register "
                  "bindVerb, or no node is ever discarded")
    wait = permit_wait(profile)
    if wait is None:
        return
    needed = http_timeout_for(wait, bind_deadline)
    if not binders:
        out.error(f"{where}extenders", "the extender's policy enables Coscheduling, whose Permit "
                  "runs in the bind verb: register bindVerb, or the gang's binds are never held")
        return
    for i, extender in binders:
        text = str(extender.get("httpTimeout") or "5s")
        try:
            timeout = parse_go_duration(text)
        except ValueError:
            continue  # the configuration's own check reports it
        if timeout < needed:
            out.error(f"{where}extenders[{i}].httpTimeout",
                      f"{text} is shorter than a bind held at Coscheduling's Permit can take: "
                      f"at least {format_go_duration(needed)} (permitWaitingTimeSeconds "
                      f"{wait:g} + the extender's --bind-deadline {bind_deadline:g}s + 2s; "
                      "extender render-config --policy writes it)")


def sidecar(host: str) -> bool:
    """Whether an extender listening on `host` serves only its own pod: a sidecar, whose
    kube-scheduler (one per replica, only the leader scheduling) is its only caller, so its
    holds and reservations live in the one process the scheduling replica calls."""
    return host in LOOPBACK


def check_replicas(name: str, replicas: int, args: list[str], policy: Any,
                   out: Collector) -> None:
    """An extender Deployment of `replicas` running `args` under `policy`."""
    from extender.engine.profile import build_profile

    host = flag_value(args, "--bind-address", "--host") or LOOPBACK[0]
    if replicas <= 1 or "--leader-elect" in args or sidecar(host):
        return
    stateful = stateful_plugins(build_profile(policy))
    if stateful:
        out.error(f"Deployment/{name}.spec.replicas",
                  f"{replicas} replicas without --leader-elect would split "
                  f"{' and '.join(stateful)}'s held binds and reservations between processes "
                  "that cannot see each other's: add --leader-elect (components/ha does) or run "
                  "one replica")

