"""Flow files written by older mitmproxy versions (tests/importing/old-flows/) import as the installed
mitmproxy's `io` migrates them: the same session, recorded as llmproxy would have recorded it."""

from pathlib import Path

import pytest
from mitmproxy import version
from mitmproxy.io import tnetstring

from llmproxy.cassette.store import load_cassette
from tests.importing.test_import import assert_recorded_as_llmproxy_would, imported
from tests.record.world import turns

OLD_FLOWS = Path(__file__).with_name("old-flows")
KEY = "sk-ant-api03-" + "x" * 86  # the placeholder key the session was recorded with (record.py)
ANSWERS = dict(
    zip(("openai", "openai-stream", "anthropic", "anthropic-stream"), (t.text for t in turns(4)), strict=True)
)


@pytest.mark.parametrize(("name", "flow_format"), [("mitmdump-7.0.4.mitm", 14), ("mitmdump-9.0.1.mitm", 18)])
def test_a_flow_file_of_an_older_mitmproxy_imports_as_if_recorded(name: str, flow_format: int, tmp_path: Path) -> None:
    path = OLD_FLOWS / name
    with path.open("rb") as file:
        first = tnetstring.load(file)
    assert isinstance(first, dict)
    assert first["version"] == flow_format < version.FLOW_FORMAT_VERSION  # migrated on reading, not read as is
    assert KEY.encode() in path.read_bytes()  # mitmdump kept the key: the import must not
    cassette = imported(path, tmp_path)
    assert_recorded_as_llmproxy_would(cassette, ANSWERS, key=KEY)
    timings = [exchange.timings for exchange in load_cassette(cassette).exchanges]
    assert all(t.ttfb_ms is not None and t.total_ms is not None and t.ttfb_ms <= t.total_ms for t in timings)
