"""Optional abilities (`engine.abilities`) are found once, on a profile's first use; a prepared
check's, once per check type."""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine import abilities, registry
from extender.engine.args import NEWEST_VERSION
from extender.engine.framework import NOT_VECTORISED, Profile
from extender.engine.policy import parse_policy
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.profile import build_profile


class _Plain:
    """A plugin with none of the optional abilities, at every extension point."""

    name = "Plain"

    def prepare(self, pod: Any) -> None:
        return None

    def score(self, state: Any, pod: Any, nodes: Any, ctx: Any) -> list[int]:
        return [0] * len(nodes)


class _Able(_Plain):
    """A plugin with every plugin ability."""

    name = "Able"
    memo_label = "Able/configured"
    victim_guard = object()
    default_victim_rule = True

    def restrict(self, pod: Any) -> None:
        return None

    def score_rows(self, state: Any, pod: Any, table: Any, rows: Any, ctx: Any) -> Any:
        return NOT_VECTORISED

    def rejected_pre_filter_state(self, pod: Any, ctx: Any) -> None:
        return None


def test_a_plugin_with_each_ability_is_recognised_at_profile_build() -> None:
    able = _Able()
    profile = Profile((able,), ((able, 1),), able, None)  # type: ignore[arg-type]
    for found in (abilities.of(profile).filters[0], abilities.of(profile).scorers[0],
                  abilities.of(profile).post_filter):
        assert found is not None
        assert found.restricts is able and found.scores_rows is able
        assert found.memo_label == "Able/configured"
        assert found.victim_guard is able.victim_guard and found.default_victim_rule
    assert isinstance(able, abilities.RestoresRejectedState)


def test_a_plugin_without_them_is_not() -> None:
    plain = _Plain()
    profile = Profile((plain,), ((plain, 1),), plain, None)  # type: ignore[arg-type]
    for found in (abilities.of(profile).filters[0], abilities.of(profile).scorers[0],
                  abilities.of(profile).post_filter):
        assert found == abilities.PluginAbilities(memo_label="Plain")
    assert not isinstance(plain, abilities.RestoresRejectedState)
    assert abilities.of(Profile((), (), None, None)).post_filter is None


def test_a_replaced_profile_finds_its_own_abilities_again() -> None:
    import dataclasses

    able, plain = _Able(), _Plain()
    profile = Profile((), ((plain, 1),), None, None)  # type: ignore[arg-type]
    replaced = dataclasses.replace(profile, scorers=((able, 1),))
    assert abilities.of(replaced).scorers[0].scores_rows is able


def test_the_registered_plugins_abilities() -> None:
    plugins = {
        "filter": {"enabled": [{"name": "NodeAffinity"}, {"name": "TaintToleration"},
                               {"name": "NodeResourcesFit"}]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1},
                              {"name": "InterPodAffinity", "weight": 1}]}}
    policy = parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                           "plugins": plugins})
    profile = build_profile(policy)
    by_name = {p.name: a for p, a in zip(profile.filters, abilities.of(profile).filters, strict=True)}
    assert by_name["NodeAffinity"].restricts is not None
    assert by_name["TaintToleration"].restricts is None
    assert by_name["TaintToleration"].memo_label == "TaintToleration"
    assert by_name["NodeResourcesFit"].memo_label == "NodeResourcesFit"  # its name
    scorers = {p.name: a for (p, _), a in zip(profile.scorers, abilities.of(profile).scorers,
                                              strict=True)}
    assert scorers["NodeResourcesFit"].scores_rows is not None


@pytest.mark.parametrize("name", registry.PREEMPTION_PLUGINS)
def test_a_postfilter_declares_its_victim_rule(name: str) -> None:
    """`default_victim_rule` (which the preempt verb's fast path asks) is True exactly for
    the PostFilter plugins whose `can_preempt` is DefaultPreemption's."""
    plugin = registry.factory("postFilter", name)(
        registry.PLUGINS[name].args_model.model_validate({}), NEWEST_VERSION)
    found = abilities.find_abilities(plugin)
    assert found.default_victim_rule == (type(plugin).can_preempt is DefaultPreemption.can_preempt)
    assert found.victim_guard is plugin.victim_guard


class _RowCheck:
    def __call__(self, node: Any) -> None:
        return None

    def judge_rows(self, table: Any, rows: Any) -> Any: ...
    def fits_rows(self, table: Any, rows: Any) -> Any: ...
    def explain_rows(self, table: Any, rows: Any) -> Any: ...
    def filter_many(self, nodes: Any, statuses: Any) -> Any: ...


def test_check_abilities_by_type() -> None:
    check = _RowCheck()
    assert abilities.judges_rows(check) and abilities.fits_rows(check)
    assert abilities.explains_rows(check) and abilities.filters_many(check)

    def plain(node: Any) -> None:
        return None

    for other in (plain, lambda node: None):
        assert not abilities.judges_rows(other) and not abilities.fits_rows(other)
        assert not abilities.explains_rows(other) and not abilities.filters_many(other)


def _by_isinstance(plugin: Any) -> abilities.PluginAbilities:
    """The reference: each ability asked by `isinstance` against its Protocol."""
    return abilities.PluginAbilities(
        restricts=plugin if isinstance(plugin, abilities.Restricts) else None,
        memo_label=plugin.memo_label if isinstance(plugin, abilities.MemoLabelled) else plugin.name,
        scores_rows=plugin if isinstance(plugin, abilities.ScoresRows) else None,
        victim_guard=plugin.victim_guard if isinstance(plugin, abilities.GuardsVictims) else None,
        default_victim_rule=isinstance(plugin, abilities.VictimRule) and bool(plugin.default_victim_rule))


@pytest.mark.parametrize(("point", "name"), [
    (point, name) for point in ("filter", "score", "postFilter")
    for name in registry.EXTENSION_POINTS[point]])
def test_abilities_are_what_isinstance_against_the_protocols_finds(point: str, name: str) -> None:
    """`find_abilities` asks by attribute (`isinstance` against a runtime-checkable Protocol
    cost 85 % of a profile's build): the same answers for every registered plugin."""
    plugin = registry.factory(point, name)(registry.PLUGINS[name].args_model.model_validate({}),
                                           NEWEST_VERSION)
    assert abilities.find_abilities(plugin) == _by_isinstance(plugin)


class _Blocked(_Able):
    """Abilities blocked as a Protocol allows: methods set to None; fields that are None."""

    restrict = None  # type: ignore[assignment]
    score_rows = None  # type: ignore[assignment]
    memo_label = None  # type: ignore[assignment]
    victim_guard = None
    default_victim_rule = False


@pytest.mark.parametrize("plugin", [_Plain(), _Able(), _Blocked()], ids=["plain", "able", "blocked"])
def test_abilities_of_hand_made_plugins_are_what_isinstance_finds(plugin: Any) -> None:
    assert abilities.find_abilities(plugin) == _by_isinstance(plugin)
