"""What no single file shows: kube-scheduler's configuration against the extender's policy,
and the extender's Deployment against both.

- A policy with Coscheduling holds a bind at Permit for up to the group's wait: the
  extender's `httpTimeout` in kube-scheduler's configuration must outlast it (the wait, the
  extender's `--bind-deadline` and 2 s, as `render-config --policy` writes), and the extender
  must be the binder (`bindVerb`), or the holds never happen.
- A policy with Coscheduling or CapacityScheduling keeps holds and reservations in one
  process: several extender replicas need `--leader-elect` (only the leader then answers), or
  they split a gang's binds and a quota's reservations between processes.

`check-config` runs these on a pair of files given together, and on rendered manifests
(`kubectl kustomize DIR | extender check-config -`: the ConfigMaps' files and the Deployments).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from extender.ops.fields import format_go_duration, parse_go_duration
from extender.ops.problems import Collector

STATEFUL = ("Coscheduling", "CapacityScheduling")
DEFAULT_BIND_DEADLINE = 4.0


def permit_wait(policy: Any) -> float | None:
    """Seconds a bind may be held at Coscheduling's Permit under `policy` (None: no gang)."""
    from extender.engine.profile import build_profile

    profile = build_profile(policy)
    coscheduling = next((p for p in profile.filters if p.name == "Coscheduling"), None)
    if coscheduling is None:
        return None
    return float(coscheduling.manager.args.permit_waiting_time_seconds)  # type: ignore[union-attr]


def check_pair(config: dict[str, Any], policy: Any, out: Collector, where: str = "",
               bind_deadline: float = DEFAULT_BIND_DEADLINE) -> None:
    """kube-scheduler's configuration `config` (parsed) against the extender's `policy`."""
    from extender.state.permit import http_timeout_for

    wait = permit_wait(policy)
    if wait is None:
        return
    needed = http_timeout_for(wait, bind_deadline)
    extenders = config.get("extenders") if isinstance(config.get("extenders"), list) else []
    binders = [(i, e) for i, e in enumerate(extenders) if isinstance(e, dict) and e.get("bindVerb")]
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


def check_replicas(name: str, replicas: int, args: list[str], policy: Any,
                   out: Collector) -> None:
    """An extender Deployment of `replicas` running `args` under `policy`."""
    from extender.engine.profile import build_profile

    if replicas <= 1 or "--leader-elect" in args:
        return
    stateful = [n for n in build_profile(policy).filter_names if n in STATEFUL]
    if stateful:
        out.error(f"Deployment/{name}.spec.replicas",
                  f"{replicas} replicas without --leader-elect would split "
                  f"{' and '.join(stateful)}'s held binds and reservations between processes "
                  "that cannot see each other's: add --leader-elect (components/ha does) or run "
                  "one replica")


def _flag(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def check_manifests(documents: Iterable[Any], out: Collector) -> None:
    """Rendered manifests: every KubeSchedulerConfiguration and ExtenderPolicy a ConfigMap
    carries, checked alone and against each other, and the extender's Deployment against them."""
    from extender.engine.policy import PolicyError, parse_policy
    from extender.ops.schedconfig import check_document, policy_problems

    configs: list[tuple[str, dict[str, Any]]] = []
    policies: list[Any] = []
    extenders: list[tuple[str, int, list[str]]] = []
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        kind, name = doc.get("kind"), (doc.get("metadata") or {}).get("name", "")
        if kind == "ConfigMap":
            for key, text in (doc.get("data") or {}).items():
                try:
                    inner = yaml.safe_load(text)
                except yaml.YAMLError as exc:
                    out.error(f"ConfigMap/{name}[{key}]", f"not valid YAML: {exc}")
                    continue
                if not isinstance(inner, dict):
                    continue
                where = f"ConfigMap/{name}[{key}]"
                if inner.get("kind") == "KubeSchedulerConfiguration":
                    inner_out = Collector(out.file)
                    check_document(inner, inner_out)
                    out.problems.extend(p.__class__(p.file, f"{where}: {p.path}", p.message,
                                                    p.severity) for p in inner_out.problems)
                    configs.append((f"{where}: ", inner))
                elif inner.get("kind") == "ExtenderPolicy":
                    try:
                        policies.append(parse_policy(inner, where))
                    except PolicyError as exc:
                        out.problems.extend(policy_problems(out.file, exc, prefix=f"{where}: "))
        elif kind == "Deployment":
            spec = doc.get("spec") or {}
            for container in ((spec.get("template") or {}).get("spec") or {}).get(
                    "containers") or []:
                argv = [*(container.get("command") or []), *(container.get("args") or [])]
                if "serve" in argv and any("extender" in str(a) for a in argv[:2]):
                    extenders.append((name, int(spec.get("replicas") or 1), argv))
    for policy in policies:
        deadlines = [float(d) for _, _, args in extenders
                     if (d := _flag(args, "--bind-deadline")) is not None]
        for where, config in configs:
            check_pair(config, policy, out, where,
                       deadlines[0] if deadlines else DEFAULT_BIND_DEADLINE)
        for name, replicas, args in extenders:
            check_replicas(name, replicas, args, policy, out)
