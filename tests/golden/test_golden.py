"""Every chat codec against its committed golden files: encoding is byte-stable, decoding gives the case back.

Regenerate with `scripts/regen_golden.py` after a deliberate wire-format change.
"""

import json
from pathlib import Path

import pytest

from llmproxy.providers.registry import CHAT_CODECS
from tests.golden.cases import CASES, stream_suffix

GOLDEN = Path(__file__).parent
PAIRS = [(codec, case) for codec in CHAT_CODECS for case in CASES]


@pytest.mark.parametrize(("codec_name", "case"), PAIRS)
def test_body_matches_golden(codec_name: str, case: str) -> None:
    codec = CHAT_CODECS[codec_name]
    golden = json.loads((GOLDEN / codec_name / f"{case}.json").read_text())
    assert json.loads(codec.encode_response(CASES[case])) == golden
    assert codec.decode_response(json.dumps(golden).encode()) == codec.visible(CASES[case])


@pytest.mark.parametrize(("codec_name", "case"), PAIRS)
def test_stream_matches_golden(codec_name: str, case: str) -> None:
    codec = CHAT_CODECS[codec_name]
    golden = (GOLDEN / codec_name / f"{case}{stream_suffix(codec)}").read_bytes()
    assert b"".join(codec.encode_stream(CASES[case])) == golden
    assert codec.decode_stream([golden]) == codec.visible(CASES[case])
