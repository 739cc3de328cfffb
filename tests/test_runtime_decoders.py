"""``StopCutter``: text cut at the user's first stop string, as a provider cuts it
(the runtime's native replies and selection turns, providers that refuse ``stop``,
the proxy without tools)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.parser.stopcut import StopCutter


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ABCD<", max_size=30),
    st.lists(st.text(alphabet="ABCD", min_size=1, max_size=4), min_size=1, max_size=3),
    st.data(),
)
def test_any_split_cuts_where_the_first_stop_string_ends(
    text: str, stops: list[str], data: st.DataObject
) -> None:
    """Whole or in any pieces, the text ends before the stop string that is whole
    first (as a provider streaming it meets it), and nothing is held at the end."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    cut = StopCutter(stops)
    out = "".join(cut.feed(piece) for piece in pieces) + cut.flush()
    found = [(text.find(s) + len(s), text.find(s), s) for s in stops if s in text]
    assert out == (text[: min(found)[1]] if found else text)
    assert cut.hit == (min(found)[2] if found else None)


def test_text_that_may_begin_a_stop_string_waits_for_the_next_piece() -> None:
    cut = StopCutter(["END"])
    assert cut.feed("It is EN") == "It is "
    assert cut.feed("D and more") == "" and cut.hit == "END"
    other = StopCutter(["END"])
    assert other.feed("EN") == "" and other.feed("ough") == "ENough"
