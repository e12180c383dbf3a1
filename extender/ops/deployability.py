"""Whether rendered manifests can run as they are: every budget lets a pod be evicted, every
image is a real one, and the extender's account may read what its policy's plugins watch.

Each mistake here renders and applies without complaint, and shows only later: a node drain
that waits for ever, a pod that never pulls its image, an extender that never turns Ready.
kustomize causes most of them by applying a component's patch only to objects that exist
when the component runs:
- `ha` before `kube-scheduler` leaves kube-scheduler at one replica beside a budget of
  `minAvailable: 1`;
- `images` before `kube-scheduler`, or left out, leaves the placeholder image;
- a policy that enables NodeResourceTopologyMatch without `components/numa` leaves the
  extender without read access to the reports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from extender.ops.objects import Pod, as_int, meta, pods, selected
from extender.ops.problems import Collector
from extender.ops.wiring import is_extender

#: The image names the manifests' resources carry until `components/images` sets them
#: (tests/ops holds them to that component's `images`).
PLACEHOLDER_IMAGES = ("scheduler-extender", "kube-scheduler")


def check_deployable(documents: Iterable[Any], policies: list[Any], out: Collector) -> None:
    """`documents`: rendered manifests; `policies`: the ExtenderPolicies they carry, parsed."""
    docs = [d for d in documents if isinstance(d, dict)]
    found = pods(docs)
    for doc in docs:
        if doc.get("kind") == "PodDisruptionBudget":
            _check_budget(doc, found, out)
    _check_images(found, out)
    for policy in policies:
        _check_access(docs, found, policy, out)


def _check_budget(doc: dict[str, Any], found: list[Pod], out: Collector) -> None:
    namespace, name = meta(doc)
    spec = doc.get("spec") or {}
    path = f"PodDisruptionBudget/{name}.spec"
    picked = selected(found, namespace, (spec.get("selector") or {}).get("matchLabels") or {})
    if not picked:
        out.warning(f"{path}.selector", "selects no pod of these manifests (a budget left "
                    "behind by a component whose Deployment is not here?)")
        return
    total = sum(p.replicas for p in picked)
    if "minAvailable" in spec:
        kept = _count(spec["minAvailable"], total)
        allowed = total - kept if kept is not None else None
    elif "maxUnavailable" in spec:
        allowed = _count(spec["maxUnavailable"], total)
    else:
        return
    if allowed is not None and allowed <= 0 and total > 0:
        which = ", ".join(f"Deployment/{p.deployment} ({p.replicas})" for p in picked)
        out.error(path, f"lets none of the {total} pod(s) of {which} be evicted: every node "
                  "drain waits for ever. Run more replicas (components/ha sets 2, and only on "
                  "a Deployment listed before it: list components/kube-scheduler first)")


def _count(value: Any, total: int) -> int | None:
    """A budget's count, or its percentage of `total` rounded up, as the disruption
    controller rounds both minAvailable and maxUnavailable (`GetScaledValueFromIntOrPercent`
    with roundUp)."""
    if isinstance(value, str) and value.endswith("%"):
        percent = as_int(value[:-1], -1)
        return None if percent < 0 else math.ceil(total * percent / 100)
    count = as_int(value, -1)
    return None if count < 0 else count


def _check_images(found: list[Pod], out: Collector) -> None:
    for pod in found:
        for i, container in enumerate(pod.containers):
            if container.image in PLACEHOLDER_IMAGES:
                out.error(f"Deployment/{pod.deployment}.spec.template.spec.containers[{i}].image",
                          f"{container.image} is the manifests' placeholder, which no registry "
                          "serves: components/images sets the real image, and only on objects "
                          "listed before it (list it last)")


def _check_access(docs: list[dict[str, Any]], found: list[Pod], policy: Any,
                  out: Collector) -> None:
    """The extender's ServiceAccount may list and watch every resource its policy needs,
    cluster-wide (the informer lists across namespaces). Judged only when every ClusterRole
    bound to the account is among the manifests."""
    from extender.engine import registry
    from extender.engine.profile import build_profile
    from extender.state.informer import resources_for

    names = build_profile(policy).plugin_names
    roles = {meta(d)[1]: d for d in docs if d.get("kind") == "ClusterRole"}
    for pod in found:
        if not any(is_extender(c.argv) for c in pod.containers):
            continue
        rules = _granted(docs, roles, pod.namespace, pod.account)
        if rules is None:
            continue
        for resource in resources_for(names):
            group = resource.group_version.rpartition("/")[0]
            if all(_allows(rules, group, resource.name, verb) for verb in ("list", "watch")):
                continue
            readers = [n for n in names if n in registry.PLUGINS
                       and resource in registry.PLUGINS[n].resources]
            need = (f"the policy enables {' and '.join(readers)}, which "
                    f"read{'s' if len(readers) == 1 else ''}" if readers else "the extender reads")
            grant = (f"; components/{resource.component} grants it and ships the CRD"
                     if resource.crd else "")
            out.error(f"Deployment/{pod.deployment}.spec.template.spec.serviceAccountName",
                      f"{need} {resource.name} ({group or 'core'}), which ServiceAccount "
                      f"{pod.namespace}/{pod.account} may not list and watch: the extender "
                      f"never turns Ready{grant}")


def _granted(docs: list[dict[str, Any]], roles: dict[str, dict[str, Any]], namespace: str,
             account: str) -> list[dict[str, Any]] | None:
    """The rules ClusterRoleBindings grant the account; None when a bound ClusterRole is not
    among the manifests (or aggregates others), so what it grants is unknown here."""
    rules: list[dict[str, Any]] = []
    for doc in docs:
        if doc.get("kind") != "ClusterRoleBinding":
            continue
        if not any(isinstance(s, dict) and s.get("kind") == "ServiceAccount"
                   and s.get("name") == account and s.get("namespace") == namespace
                   for s in doc.get("subjects") or []):
            continue
        role = roles.get(str((doc.get("roleRef") or {}).get("name", "")))
        if role is None or role.get("aggregationRule"):
            return None
        rules += [r for r in role.get("rules") or [] if isinstance(r, dict)]
    return rules


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(_has(rule.get("apiGroups"), group) and _has(rule.get("resources"), resource)
               and _has(rule.get("verbs"), verb) for rule in rules)


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and (wanted in values or "*" in values)
