"""Helpers the codecs share."""

import pytest

from llmproxy.providers.base import split_data_url, split_deltas


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("data:image/png;base64,iVBORw0KGgo=", ("image/png", "iVBORw0KGgo=")),
        ("data:;base64,AAAA", (None, "AAAA")),
        ("data:text/plain,hello", None),  # not base64: not inline data the model parts carry
        ("data:image/png;base64", None),
        ("https://example.com/cat.png", None),
    ],
)
def test_split_data_url(url: str, expected: tuple[str | None, str] | None) -> None:
    assert split_data_url(url) == expected


def test_split_deltas_cuts_after_whitespace_and_joins_back() -> None:
    assert split_deltas("hello brave new world", 8) == ("hello ", "brave ", "new ", "world")
    assert split_deltas("abcdefghij", 4) == ("abcd", "efgh", "ij")
    assert split_deltas("", 4) == ()
    with pytest.raises(ValueError, match="at least 1"):
        split_deltas("x", 0)
