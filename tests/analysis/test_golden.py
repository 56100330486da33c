"""Every renderer, byte for byte, over committed cassettes: a real Claude Code tool loop, a real Codex tool
loop, and a crafted run with findings (tests/analysis/golden.py; scripts/regen_golden.py rewrites them)."""

import pytest

from tests.analysis.golden import CASSETTES, SUFFIXES, golden_path, rendered


@pytest.mark.parametrize("fmt", list(SUFFIXES))
@pytest.mark.parametrize("cassette", CASSETTES)
def test_the_renderer_output_matches_its_golden_file(cassette: str, fmt: str) -> None:
    expected = golden_path(cassette, fmt).read_bytes().decode()
    assert rendered(cassette, fmt) == expected, "run scripts/regen_golden.py and review the diff"
