"""Regenerate the golden files: each chat codec's encoding of every case in tests/golden/cases.py.

    .venv/bin/python scripts/regen_golden.py

Writes tests/golden/<codec>/<case>.json (non-streaming body, pretty-printed) and the stream, byte-exact, in the
codec's framing: <case>.sse, .ndjson, or .eventstream for AWS event-stream codecs; for embedding and rerank
codecs, the answer to each case of tests/golden/vector_cases.py; and every report renderer's output for the
cassettes in tests/analysis/golden.py (tests/golden/report/), with the signal details docs/report.md quotes.
Review the diff before committing: a golden change is a wire-format change.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llmproxy.providers.registry import CHAT_CODECS, EMBEDDING_CODECS, RERANK_CODECS  # noqa: E402
from tests.analysis.golden import regenerate as regenerate_reports  # noqa: E402
from tests.analysis.golden import regenerate_doc_quotes  # noqa: E402
from tests.golden.cases import CASES, stream_suffix  # noqa: E402
from tests.golden.vector_cases import EMBEDDING_CASES, RERANK_CASES  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"


def main() -> None:
    for name, codec in CHAT_CODECS.items():
        folder = GOLDEN / name
        folder.mkdir(parents=True, exist_ok=True)
        for case, completion in CASES.items():
            body = json.loads(codec.encode_response(completion))
            (folder / f"{case}.json").write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
            (folder / f"{case}{stream_suffix(codec)}").write_bytes(b"".join(codec.encode_stream(completion)))
        print(f"{name}: {len(CASES)} cases")
    for case, embedding in EMBEDDING_CASES.items():
        body = EMBEDDING_CODECS[embedding.codec].encode_response(embedding.result, embedding.decoded)
        _write(GOLDEN / embedding.codec / f"{case}.json", body)
    for case, ranking in RERANK_CASES.items():
        _write(
            GOLDEN / ranking.codec / f"{case}.json",
            RERANK_CODECS[ranking.codec].encode_response(ranking.result, ranking.decoded),
        )
    print(f"embeddings and rerank: {len(EMBEDDING_CASES) + len(RERANK_CASES)} cases")
    print(f"reports: {regenerate_reports()} files, {regenerate_doc_quotes()} quotes in docs/report.md")


def _write(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json.loads(body), indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
