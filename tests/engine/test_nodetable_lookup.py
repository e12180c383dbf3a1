"""`NodeTable.rows` finds long name lists in large tables by hash (`HashIndex`): always the
dict's answer.

The rows of every name in order, or None when some name is not a node; through nodes added,
dropped and re-added (each changes the layout the index was built for), repeated names, and
lists long enough to take the hashed lookup and short enough not to, in tables taken as large
enough for it and as not."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine import nodetable
from extender.engine.nodetable import HASHED_LOOKUP, HashIndex, NodeTable
from tests.engine.filter_helpers import node

POOL = [node(f"node-{i}.example.internal", allocatable={"cpu": "1", "memory": "1Gi", "pods": "4"})
        for i in range(400)]


def reference(table: NodeTable, names: list[str]) -> list[int] | None:
    if any(name not in table.ordinal for name in names):
        return None
    return [table.ordinal[name] for name in names]


@settings(max_examples=150, deadline=None)
@given(data=st.data(), size=st.integers(0, 400), hashed=st.booleans())
def test_rows_are_the_dicts_rows(data: st.DataObject, size: int, hashed: bool) -> None:
    table = NodeTable(capacity=8)
    for info in POOL[:size]:
        table.put(info)
    for _ in range(data.draw(st.integers(0, 3), label="rounds")):
        for index in data.draw(st.lists(st.integers(0, 399), max_size=20), label="changes"):
            name = POOL[index].node.name
            if name in table.ordinal:
                table.drop(name)
            else:
                table.put(POOL[index])
        known = list(table.ordinal)
        length = data.draw(st.sampled_from([0, 1, 10, HASHED_LOOKUP - 1, HASHED_LOOKUP, 200,
                                            300]), label="length")
        names = data.draw(st.lists(
            st.sampled_from(known) if known else st.just("node-0.example.internal"),
            min_size=length, max_size=length), label="names")
        if data.draw(st.booleans(), label="unknown") and names:
            spot = data.draw(st.integers(0, len(names) - 1), label="spot")
            names[spot] = data.draw(st.sampled_from(["", "node-9999.example.internal",
                                                     "NODE-1.example.internal", "node-1"]))
        with mock.patch.object(nodetable, "HASHED_TABLE", 0 if hashed else 10**9):
            found = table.rows(names)
        expected = reference(table, names)
        assert (None if found is None else found.tolist()) == expected


def test_a_long_list_takes_the_hashed_lookup() -> None:
    table = NodeTable()
    for info in POOL:
        table.put(info)
    names = [info.node.name for info in POOL[::-3]]
    assert len(names) >= HASHED_LOOKUP
    index = table._hash_index()
    found = index.rows(names)
    assert found is not None and found.tolist() == [table.ordinal[n] for n in names]
    assert index.rows([*names, "node-400.example.internal"]) is None
    assert table._hash_index() is index  # kept while the layout holds
    table.drop(names[0])
    assert table._hash_index() is not index
    assert table.rows(names) is None


def test_only_a_large_table_builds_the_index() -> None:
    table = NodeTable()
    for info in POOL:
        table.put(info)
    names = [info.node.name for info in POOL[::2]]
    expected = [table.ordinal[n] for n in names]
    with mock.patch.object(nodetable, "HASHED_TABLE", len(POOL) + 1):
        assert table.rows(names).tolist() == expected
        assert table._by_hash is None
    with mock.patch.object(nodetable, "HASHED_TABLE", len(POOL)):
        assert table.rows(names).tolist() == expected
        assert table._by_hash is not None


class SameHash(str):
    """Names whose hashes collide, which real names (SipHash, 64 bits) practically never do."""

    def __hash__(self) -> int:
        return 7


def test_names_sharing_a_hash_leave_the_decision_to_the_dict() -> None:
    index = HashIndex({SameHash("a"): 0, SameHash("b"): 1}, layout=0)
    assert not index.usable
    assert index.rows(["a"]) is None


def test_the_packed_dict_is_ordinal_again_rebuilt_with_the_layout() -> None:
    table = NodeTable()
    for info in POOL[:50]:
        table.put(info)
    packed = table._packed_ordinal()
    assert packed == table.ordinal and packed is not table.ordinal
    assert table._packed_ordinal() is packed  # kept while the layout holds
    name = POOL[10].node.name
    table.drop(name)
    assert name not in table._packed_ordinal()
    assert table.rows([name]) is None
    table.put(POOL[10])
    assert table._packed_ordinal() == table.ordinal
    other = POOL[3].node.name
    assert table.rows([name, other]).tolist() == [table.ordinal[name], table.ordinal[other]]
