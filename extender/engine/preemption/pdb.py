"""PodDisruptionBudgets in victim selection: `filterPodsWithPDBViolation`.

The scheduler never evaluates `minAvailable`/`maxUnavailable`; it spends each PDB's
`status.disruptionsAllowed` (kept up to date by the disruption controller) on the pods in the
order given, and a pod that overdraws any budget is *violating*.
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.model.disruption import PdbView
from extender.model.pod import PodView


def filter_pods_with_pdb_violation(
    pods: Sequence[PodView], pdbs: Sequence[PdbView],
) -> tuple[list[PodView], list[PodView]]:
    """Split `pods` into (violating, non-violating), each keeping the input order.

    A PDB matches a pod in its own namespace whose labels its selector matches (a nil or empty
    selector matches nothing) unless the pod is already in its `status.disruptedPods`, which
    the API server has counted (decrementing again would overdraw the budget).
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    in_namespace: dict[str, list[int]] = {}
    for i, pdb in enumerate(pdbs):
        in_namespace.setdefault(pdb.namespace, []).append(i)
    violating: list[PodView] = []
    non_violating: list[PodView] = []
    for pod in pods:
        violated = False
        if pod.labels:  # an unlabelled pod matches no selector
            for i in in_namespace.get(pod.namespace, ()):
                if pdbs[i].covers(pod.namespace, pod.name, pod.labels):
                    allowed[i] -= 1
                    if allowed[i] < 0:
                        violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def count_pdb_violations(
    victims: Sequence[PodView], potential: Sequence[PodView], pdbs: Sequence[PdbView],
) -> int:
    """How many `victims` fall in the violating group of the node's `potential` victims
    (most important first), which is how `SelectVictimsOnNode` counts `NumPDBViolations`."""
    violating, _ = filter_pods_with_pdb_violation(potential, pdbs)
    violating_uids = {p.uid for p in violating}
    return sum(1 for v in victims if v.uid in violating_uids)
