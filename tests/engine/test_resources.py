"""Pod request vectors and resource lists (reference/algorithms.md §A.1, §B.1)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from extender.model import k8s
from extender.model.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resources,
    aggregate_requests,
    is_extended_resource,
    is_scalar_resource,
    pod_non_zero_requests,
    pod_requests,
    pod_scoring_non_zero_requests,
    resources_from_list,
)

Mi = 2**20
Gi = 2**30


def spec(**fields: Any) -> k8s.PodSpec:
    return k8s.convert(fields, k8s.PodSpec)


def c(requests: dict[str, Any] | None = None, *, sidecar: bool = False, name: str = "c") -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    if requests is not None:
        container["resources"] = {"requests": requests}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


# --- §A.1 aggregation -------------------------------------------------------------------------


def test_fit_go_worked_example() -> None:
    pod = spec(
        initContainers=[c({"cpu": "2", "memory": "1G"}), c({"cpu": "2", "memory": "3G"})],
        containers=[c({"cpu": "2", "memory": "1G"}), c({"cpu": "1", "memory": "1G"})],
    )
    assert pod_requests(pod) == Resources(milli_cpu=3000, memory=3 * 10**9)


def test_sidecar_example() -> None:
    pod = spec(
        containers=[c({"cpu": "1"})],
        initContainers=[c({"cpu": "2"}), c({"cpu": "500m"}, sidecar=True), c({"cpu": "1.8"})],
    )
    assert pod_requests(pod).milli_cpu == 2300


def test_sidecars_count_only_for_later_init_containers() -> None:
    before = spec(containers=[c({"cpu": "1"})], initContainers=[c({"cpu": "3"}), c({"cpu": "1"}, sidecar=True)])
    after = spec(containers=[c({"cpu": "1"})], initContainers=[c({"cpu": "1"}, sidecar=True), c({"cpu": "3"})])
    assert pod_requests(before).milli_cpu == 3000  # max(1 + 1, 3)
    assert pod_requests(after).milli_cpu == 4000  # the init container runs beside the sidecar


def test_sidecars_accumulate() -> None:
    pod = spec(
        containers=[c({"memory": "100Mi"})],
        initContainers=[c({"memory": "50Mi"}, sidecar=True), c({"memory": "30Mi"}, sidecar=True),
                        c({"memory": "150Mi"})],
    )
    # regular = 100 + 50 + 30 = 180; init phase peaks at 150 + 80 = 230
    assert pod_requests(pod).memory == 230 * Mi


def test_legacy_init_container_max() -> None:
    pod = spec(containers=[c({"cpu": "100m", "memory": "1Gi"})], initContainers=[c({"cpu": "2"})])
    assert pod_requests(pod) == Resources(milli_cpu=2000, memory=Gi)


def test_overhead_is_added() -> None:
    pod = spec(containers=[c({"cpu": "1", "memory": "1Gi"})], overhead={"cpu": "250m", "memory": "120Mi"})
    assert pod_requests(pod) == Resources(milli_cpu=1250, memory=Gi + 120 * Mi)


def test_overhead_alone() -> None:
    pod = spec(containers=[c()], overhead={"cpu": "10m"})
    assert pod_requests(pod) == Resources(milli_cpu=10)


def test_pod_level_requests_override_supported_resources_only() -> None:
    pod = spec(
        containers=[c({"cpu": "1", "memory": "512Mi", "ephemeral-storage": "1Gi", "example.com/foo": "1",
                       "hugepages-2Mi": "2Mi"})],
        resources={"requests": {"cpu": "2", "memory": "1Gi", "ephemeral-storage": "5Gi",
                                "example.com/foo": "3", "hugepages-2Mi": "4Mi"}},
        overhead={"cpu": "100m"},
    )
    got = pod_requests(pod)
    assert got.milli_cpu == 2100  # pod level, then overhead on top
    assert got.memory == Gi
    assert got.ephemeral_storage == Gi  # not a pod-level resource: container value kept
    assert got.scalar == {"example.com/foo": 1, "hugepages-2Mi": 4 * Mi}  # hugepages: since v1.34


def test_pod_level_override_can_lower_the_aggregate() -> None:
    pod = spec(containers=[c({"cpu": "2"}), c({"cpu": "2"})], resources={"requests": {"cpu": "3"}})
    assert pod_requests(pod).milli_cpu == 3000


def test_unsupported_pod_level_requests_are_ignored() -> None:
    pod = spec(containers=[c({"cpu": "1"})], resources={"requests": {"ephemeral-storage": "5Gi"}})
    assert pod_requests(pod) == Resources(milli_cpu=1000)
    assert pod_non_zero_requests(pod) == (1000, DEFAULT_MEMORY_REQUEST)


def test_sums_round_once_at_the_end() -> None:
    # Go adds Quantities, then calls MilliValue(): 0.5m + 0.5m is 1m, not 1m + 1m.
    pod = spec(containers=[c({"cpu": "0.5m"}), c({"cpu": "0.5m"})])
    assert pod_requests(pod).milli_cpu == 1
    assert pod_requests(spec(containers=[c({"cpu": "1.5m", "memory": "1.1Ki"})])) == Resources(milli_cpu=2, memory=1127)


def test_extended_resources_and_hugepages_are_scalar() -> None:
    pod = spec(containers=[
        c({"nvidia.com/gpu": "2", "hugepages-1Gi": "2Gi", "example.com/foo": "1",
           "attachable-volumes-aws-ebs": "3", "kubernetes.io/batch": "4", "requests.example.com/x": "9",
           "foo": "5", "cpu": "0"}),
        c({"nvidia.com/gpu": "1"}),
    ])
    got = pod_requests(pod)
    assert got.scalar == {"nvidia.com/gpu": 3, "hugepages-1Gi": 2 * Gi, "example.com/foo": 1,
                          "attachable-volumes-aws-ebs": 3, "kubernetes.io/batch": 4}
    assert got.milli_cpu == 0
    assert got.get("nvidia.com/gpu") == 3
    assert got.get("foo") == 0


def test_json_numbers_in_requests() -> None:
    body = b'{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":1073741824}}}]}'
    pod = k8s.decoder(k8s.PodSpec).decode(body)
    assert pod_requests(pod) == Resources(milli_cpu=500, memory=Gi)


def test_empty_pod() -> None:
    assert pod_requests(spec()) == Resources()
    assert pod_requests(spec()).is_zero()
    assert pod_non_zero_requests(spec()) == (0, 0)


def test_aggregate_requests_is_exact() -> None:
    pod = spec(containers=[c({"cpu": "100m", "memory": "1.5Ki"})], initContainers=[c({"cpu": "1.5m"})])
    assert aggregate_requests(pod) == {"cpu": Fraction(1, 10), "memory": Fraction(1536)}
    assert aggregate_requests(spec(containers=[c()]), non_zero=True) == {
        "cpu": Fraction(1, 10), "memory": Fraction(DEFAULT_MEMORY_REQUEST)}


# --- §B.1 non-zero defaults -------------------------------------------------------------------


def test_defaults_for_a_container_without_requests() -> None:
    pod = spec(containers=[c()])
    assert pod_non_zero_requests(pod) == (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST)
    assert (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) == (100, 200 * Mi)
    assert pod_requests(pod) == Resources()  # the Fit filter never sees the defaults


def test_explicit_zero_is_not_defaulted() -> None:
    pod = spec(containers=[c({"cpu": "0"})])
    assert pod_non_zero_requests(pod) == (0, 200 * Mi)


def test_defaults_are_per_container() -> None:
    pod = spec(containers=[c({"cpu": "500m"}), c(), c({"memory": "1Gi"})])
    assert pod_non_zero_requests(pod) == (500 + 100 + 100, 200 * Mi + 200 * Mi + Gi)


def test_init_containers_are_defaulted_too() -> None:
    pod = spec(containers=[c({"cpu": "50m", "memory": "50Mi"})], initContainers=[c()])
    assert pod_non_zero_requests(pod) == (100, 200 * Mi)


def test_defaults_then_overhead() -> None:
    pod = spec(containers=[c()], overhead={"cpu": "10m", "memory": "1Mi"})
    assert pod_non_zero_requests(pod) == (110, 201 * Mi)


def test_pod_level_cpu_only_defaults_memory_everywhere() -> None:
    pod = spec(containers=[c(), c()], resources={"requests": {"cpu": "1"}})
    assert pod_non_zero_requests(pod) == (1000, 400 * Mi)
    assert pod_scoring_non_zero_requests(pod) == (1000, 400 * Mi)


def test_pod_level_set_node_side_defaults_only_missing_resources() -> None:
    # calculateResource: memory appears in the pod's requests, so no container gets a default.
    pod = spec(containers=[c({"memory": "1Gi"}), c()], resources={"requests": {"cpu": "1"}})
    assert pod_non_zero_requests(pod) == (1000, Gi)
    # calculatePodResourceRequest (incoming pod in scorers) always defaults each container.
    assert pod_scoring_non_zero_requests(pod) == (1000, Gi + 200 * Mi)


def test_pod_level_set_explicit_zero_or_overhead_counts_as_present() -> None:
    zero = spec(containers=[c({"memory": "0"}), c()], resources={"requests": {"cpu": "1"}})
    assert pod_non_zero_requests(zero) == (1000, 0)
    overhead = spec(containers=[c()], resources={"requests": {"cpu": "1"}}, overhead={"memory": "8Mi"})
    assert pod_non_zero_requests(overhead) == (1000, 8 * Mi)
    # an init container's explicit zero still puts the key in (maxResourceList keeps it)
    init_zero = spec(containers=[c()], initContainers=[c({"memory": "0"})], resources={"requests": {"cpu": "1"}})
    assert pod_non_zero_requests(init_zero) == (1000, 0)


def test_pod_level_values_win_over_defaults() -> None:
    pod = spec(containers=[c(), c()], resources={"requests": {"cpu": "250m", "memory": "64Mi"}})
    assert pod_non_zero_requests(pod) == (250, 64 * Mi)
    assert pod_scoring_non_zero_requests(pod) == (250, 64 * Mi)


def test_scoring_and_node_side_agree_without_pod_level() -> None:
    pod = spec(containers=[c({"cpu": "200m"}), c()], initContainers=[c({"memory": "1Gi"}, sidecar=True)])
    assert pod_non_zero_requests(pod) == pod_scoring_non_zero_requests(pod) == (400, Gi + 400 * Mi)


# --- ResourceList conversion and names --------------------------------------------------------


def test_node_allocatable() -> None:
    allocatable = {
        "cpu": "3920m", "memory": "16265460Ki", "ephemeral-storage": "95551679124", "pods": "110",
        "nvidia.com/gpu": "4", "hugepages-2Mi": "0", "hugepages-1Gi": "2Gi",
        "attachable-volumes-gce-pd": "127", "foo": "1",
    }
    got = resources_from_list(allocatable)
    assert got.milli_cpu == 3920
    assert got.memory == 16265460 * 1024
    assert got.ephemeral_storage == 95551679124
    assert got.allowed_pods == 110
    assert got.scalar == {"nvidia.com/gpu": 4, "hugepages-2Mi": 0, "hugepages-1Gi": 2 * Gi,
                          "attachable-volumes-gce-pd": 127}
    assert got == Resources(3920, 16265460 * 1024, 95551679124, 110,
                            {"nvidia.com/gpu": 4, "hugepages-1Gi": 2 * Gi, "attachable-volumes-gce-pd": 127})


def test_node_allocatable_rounding_and_empty() -> None:
    assert resources_from_list({"cpu": "1.5m", "memory": "1.1Ki", "pods": 110}) == Resources(2, 1127, 0, 110)
    assert resources_from_list({"cpu": 4, "memory": 8.5}) == Resources(4000, 9)
    assert resources_from_list(None) == Resources()
    assert resources_from_list({}) == Resources()


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("nvidia.com/gpu", True, True),
        ("example.com/foo", True, True),
        ("example.com/Foo_bar.1", True, True),
        ("Example.com/foo", False, False),  # not a DNS-1123 subdomain: the scheduler ignores it
        ("example.com/-foo", False, False),
        ("example.com/" + "a" * 63, True, True),
        ("example.com/" + "a" * 64, False, False),
        ("a/b/c", False, False),
        ("requests.example.com/foo", False, False),
        ("kubernetes.io/foo", False, True),  # prefixed native resource
        ("foo.kubernetes.io/bar", False, True),
        ("xkubernetes.io/bar", False, True),  # contains "kubernetes.io/"
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("cpu", False, False),
        ("pods", False, False),
        ("foo", False, False),
    ],
)
def test_resource_name_classes(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource(name) is extended
    assert is_scalar_resource(name) is scalar


def test_resources_arithmetic() -> None:
    total = Resources()
    a = Resources(100, 10, 1, 0, {"x.io/a": 2})
    total.add(a)
    total.add(Resources(50, 5, 0, 0, {"x.io/b": 1}))
    assert total == Resources(150, 15, 1, 0, {"x.io/a": 2, "x.io/b": 1})
    total.add(a, -1)
    assert total == Resources(50, 5, 0, 0, {"x.io/b": 1})  # zero scalar entries compare as absent
    copy = total.copy()
    copy.scalar["x.io/b"] = 7
    assert total.scalar["x.io/b"] == 1
    assert not total.is_zero()
    assert Resources(scalar={"x.io/a": 0}).is_zero()
