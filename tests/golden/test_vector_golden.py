"""Every embedding and rerank codec against its committed golden files: the SDK-shaped request decodes as
expected, the answer to it is byte-stable, and decoding the answer gives back what the wire carries.

Regenerate with `scripts/regen_golden.py` after a deliberate wire-format change.
"""

import json
from pathlib import Path

import pytest

from llmproxy.providers.registry import EMBEDDING_CODECS, RERANK_CODECS
from tests.golden.vector_cases import EMBEDDING_CASES, RERANK_CASES

GOLDEN = Path(__file__).parent


@pytest.mark.parametrize("name", list(EMBEDDING_CASES))
def test_embedding_case(name: str) -> None:
    case = EMBEDDING_CASES[name]
    codec = EMBEDDING_CODECS[case.codec]
    golden = json.loads((GOLDEN / case.codec / f"{name}.json").read_text())
    assert codec.decode_request(json.dumps(case.request).encode()) == case.decoded
    assert json.loads(codec.encode_response(case.result, case.decoded)) == golden
    assert codec.decode_response(json.dumps(golden).encode()) == codec.visible(case.result, case.decoded)


@pytest.mark.parametrize("name", list(RERANK_CASES))
def test_rerank_case(name: str) -> None:
    case = RERANK_CASES[name]
    codec = RERANK_CODECS[case.codec]
    golden = json.loads((GOLDEN / case.codec / f"{name}.json").read_text())
    assert codec.decode_request(json.dumps(case.request).encode()) == case.decoded
    assert json.loads(codec.encode_response(case.result, case.decoded)) == golden
    assert codec.decode_response(json.dumps(golden).encode()) == codec.visible(case.result, case.decoded)


def test_every_codec_has_a_golden_case() -> None:
    assert {case.codec for case in EMBEDDING_CASES.values()} == set(EMBEDDING_CODECS)
    assert {case.codec for case in RERANK_CASES.values()} == set(RERANK_CODECS)


def test_base64_rounds_to_float32() -> None:
    case = EMBEDDING_CASES["base64_tokens"]
    golden = json.loads((GOLDEN / case.codec / "base64_tokens.json").read_text())
    assert golden["data"][0]["embedding"] == "zczMPc3MTL6amZk+"  # 0.1, -0.2, 0.3 as little-endian float32
    decoded = EMBEDDING_CODECS[case.codec].decode_response(json.dumps(golden).encode())
    assert decoded.vectors[0] == pytest.approx((0.1, -0.2, 0.3), abs=1e-7)
    assert decoded.vectors[0] != (0.1, -0.2, 0.3)
