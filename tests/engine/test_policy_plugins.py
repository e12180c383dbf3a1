"""Policy validation for the plugin arguments and phases this framework added: every problem
comes back with its path, and `enabled: []` means no plugin."""

from __future__ import annotations

import pytest

from extender.engine.policy import PolicyError, parse_policy
from extender.engine.profile import build_profile
from tests.engine.upstream.builders import policy


def problems(document: dict) -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(document)
    return info.value.problems


def test_system_defaulting_with_default_constraints_conflicts():
    args = {"defaultingType": "System", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}
    assert problems(policy(args={"PodTopologySpread": args})) == [
        "pluginConfig[0].args: defaultConstraints must be empty when defaultingType is System"]


def test_bad_topology_key_and_duplicate_default_constraints():
    constraint = {"maxSkew": 1, "topologyKey": "zo ne", "whenUnsatisfiable": "DoNotSchedule"}
    assert problems(policy(args={"PodTopologySpread": {
        "defaultingType": "List", "defaultConstraints": [constraint]}})) == [
        "pluginConfig[0].args.defaultConstraints[0].topologyKey: topologyKey 'zo ne' is not a "
        "valid label key (a qualified name)"]
    twice = {**constraint, "topologyKey": "zone"}
    assert problems(policy(args={"PodTopologySpread": {
        "defaultingType": "List", "defaultConstraints": [twice, twice]}})) == [
        "pluginConfig[0].args: defaultConstraints: duplicate constraint for topologyKey 'zone' "
        "and whenUnsatisfiable 'DoNotSchedule'"]


def test_inter_pod_affinity_weight_bounds_and_unknown_fields():
    assert problems(policy(args={"InterPodAffinity": {"hardPodAffinityWeight": 101,
                                                      "weight": 1}})) == [
        "pluginConfig[0].args.hardPodAffinityWeight: Input should be less than or equal to 100",
        "pluginConfig[0].args.weight: unknown field"]


def test_added_affinity_must_parse():
    bad = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}
    (problem,) = problems(policy(args={"NodeAffinity": {"addedAffinity": bad}}))
    assert problem.startswith("pluginConfig[0].args.addedAffinity: invalid node selector term")


def test_kubernetes_version_must_be_supported():
    assert problems(policy(kubernetes_version="2.0")) == [
        "kubernetesVersion: kubernetesVersion '2.0' is outside the supported 1.25..1.37"]
    assert problems(policy(kubernetes_version="one")) == [
        "kubernetesVersion: kubernetesVersion 'one' is not of the form 1.N"]


def test_an_explicitly_empty_phase_has_no_plugin_and_an_omitted_one_the_defaults():
    empty = build_profile(parse_policy(policy(filters=[], scores=[])))
    assert empty.filters == () and empty.scorers == ()
    defaults = build_profile(parse_policy(policy()))
    assert defaults.filter_names == (
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity")
    assert [(p.name, w) for p, w in defaults.scorers] == [
        ("TaintToleration", 3), ("NodeAffinity", 2), ("PodTopologySpread", 2),
        ("InterPodAffinity", 2), ("NodeResourcesFit", 1), ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1)]


def test_a_mistyped_plugin_name_gets_a_did_you_mean():
    document = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                "plugins": {"filter": {"enabled": [{"name": "NodeResourceFit"}]}},
                "pluginConfig": [{"name": "nodeaffinity", "args": {}}]}
    found = problems(document)
    assert found[0].startswith("plugins.filter.enabled[0].name: unknown plugin "
                               "'NodeResourceFit' (did you mean NodeResourcesFit?) (known: ")
    assert found[1] == ("pluginConfig[0].name: unknown plugin 'nodeaffinity' "
                        "(did you mean NodeAffinity?)")
    far = problems({**document, "pluginConfig": [{"name": "Zzz", "args": {}}]})
    assert far[1] == "pluginConfig[0].name: unknown plugin 'Zzz'"  # nothing close: no guess


def test_a_kube_scheduler_configuration_is_named_as_such():
    document = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "x"}], "extenders": []}
    assert problems(document) == [
        "(root): this is a KubeSchedulerConfiguration, kube-scheduler's side (`extender "
        "check-config` checks it); a policy is an ExtenderPolicy (apiVersion: "
        "scheduler-extender/v1, kind: ExtenderPolicy, as config/policy.yaml), whose plugins and "
        "pluginConfig read as a profile's"]


def test_an_entry_that_is_no_mapping_says_what_an_entry_is():
    # As the README's `enabled: [..., {name: NetworkOverhead}]` reads when pasted literally.
    found = problems({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": {"filter": {"enabled": ["...", {"name": "NodeAffinity"}]}}})
    assert found == ["plugins.filter.enabled[0]: each entry is a mapping such as "
                     "{name: NodeAffinity} (with weight for a scorer), got '...'"]
