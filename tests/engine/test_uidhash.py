"""`uidhash.request_bytes`: the fixed-width fast path (every UID as long as the first, read
from the joined bytes) gives what NumPy's own conversion of the strings gives, and refuses
what it refuses."""

from __future__ import annotations

import uuid

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine.preemption.uidhash import WORDS, hashes, request_bytes


def reference(uids: list[str]) -> np.ndarray | None:
    """The straightforward conversion: NumPy reads each string."""
    if "\x00" in "".join(uids):
        return None
    try:
        array = np.array(uids, dtype="S")
    except UnicodeEncodeError:
        return None
    if array.itemsize > 8 * WORDS:
        return None
    width = -(-array.itemsize // 8) * 8
    return array.astype(f"S{width}")


def same(got: np.ndarray | None, want: np.ndarray | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return (got.dtype == want.dtype and got.tolist() == want.tolist()
            and hashes(got).tolist() == hashes(want).tolist())


# Letters that make the fast path's checks matter: NULs inside, at the ends, non-ASCII.
CHARS = st.sampled_from("ab-0\x00é")


@st.composite
def uid_lists(draw: st.DrawFn) -> list[str]:
    width = draw(st.integers(0, 8 * WORDS + 2))
    count = draw(st.integers(1, 12))
    uids = [draw(st.text(CHARS, min_size=width, max_size=width)) if draw(st.booleans())
            else "a" * width for _ in range(count)]
    if draw(st.integers(0, 3)) == 0:  # another width somewhere, its length made up elsewhere
        i, j = draw(st.integers(0, count - 1)), draw(st.integers(0, count - 1))
        uids[i] += "b"
        if i != j and uids[j]:
            uids[j] = uids[j][:-1]
    return uids


@settings(max_examples=400, deadline=None)
@given(uid_lists())
def test_request_bytes_is_numpys_own_conversion(uids: list[str]) -> None:
    assert same(request_bytes(uids), reference(uids)), uids


def test_uuids_take_the_fixed_width_path_and_stay_whole() -> None:
    uids = [str(uuid.uuid4()) for _ in range(500)]
    got = request_bytes(uids)
    assert got is not None and got.dtype == np.dtype("S40")
    assert got.tolist() == [u.encode() for u in uids]
    # A NUL where a separator would be, or inside one UID, is refused as before.
    assert request_bytes([*uids[:3], uids[3][:35] + "\x00"]) is None
    assert request_bytes([*uids[:3], "\x00" + uids[3][1:]]) is None
    # Two UIDs one shorter and one longer: the separators are not at their rows' ends.
    odd = [uids[0][:35], uids[1] + "x", *uids[2:5]]
    assert same(request_bytes(odd), reference(odd))
    assert request_bytes([]) is not None and len(request_bytes([])) == 0  # type: ignore[arg-type]
