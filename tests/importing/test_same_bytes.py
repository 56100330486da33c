"""What an import writes does not change when the import gets faster: the cassettes under tests/importing/stored/
were written by an earlier import of the same files, and an import now writes them byte for byte.

`calls.yaml` and `calls.har` are `cassette export`'s vcrpy and HAR forms of six calls shaped as
scripts/bench/importing.py makes them (Anthropic streams and OpenAI answers); `pydantic-ai.imported.json` is
the import of tests/importing/public/pydantic-ai. A change meant to change what an import stores rewrites them
(`LLMPROXY_REWRITE_STORED=1` with this module), and says why in its commit.
"""

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from llmproxy.cassette.redact import Redactor
from llmproxy.importing import vcrpy
from llmproxy.importing.entries import UnreadableError
from llmproxy.importing.run import ImportOptions, import_files
from llmproxy_addons.flow_files import read_flows

HERE = Path(__file__).parent
STORED = HERE / "stored"
MODIFIED = datetime(2026, 5, 1, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ([STORED / "calls.yaml"], "calls.yaml.imported.json"),
        ([STORED / "calls.har"], "calls.har.imported.json"),
        (sorted((HERE / "public" / "pydantic-ai").glob("*.yaml")), "pydantic-ai.imported.json"),
    ],
)
def test_an_import_writes_the_cassette_it_wrote_before(inputs: list[Path], expected: str, tmp_path: Path) -> None:
    """Each input copied with the same time (a vcrpy cassette's exchanges without `recorded_at` take its file's)."""
    copies = []
    for path in inputs:
        copies.append(tmp_path / path.name)
        shutil.copyfile(path, copies[-1])
        os.utime(copies[-1], (MODIFIED, MODIFIED))
    output = tmp_path / "imported.json"
    import_files(copies, output, ImportOptions(read_flows, Redactor()))
    if os.environ.get("LLMPROXY_REWRITE_STORED") == "1":
        (STORED / expected).write_bytes(output.read_bytes())
    assert output.read_bytes() == (STORED / expected).read_bytes()


UNUSUAL_YAML = """\
interactions:
- request: &request
    body: '{"model": "claude-x"}'
    headers: &headers
      Content-Type: [application/json]
    method: POST
    uri: https://api.anthropic.com/v1/messages
  response:
    body: {string: !!binary "eyJvayI6IHRydWV9"}
    headers: *headers
    status: {code: 200, message: OK}
  recorded_at: 2026-05-01T12:00:00
- request:
    <<: *request
    method: !!python/unicode 'POST'
  response:
    body: {string: ""}
    headers: {200: ["a number as a key"], "quoted": [~, true, 1.5, 0x1F]}
    status: {code: 204, message: ""}
- request: {body: null, headers: {}, method: GET, uri: "https://example.com/"}
  response: {body: {string: "ok"}, headers: {}, status: {code: 200, message: OK}}
"""


@pytest.mark.parametrize(
    "path",
    [STORED / "calls.yaml", *sorted((HERE / "public" / "pydantic-ai").glob("*.yaml")), Path("unusual.yaml")],
    ids=lambda path: path.name,
)
def test_a_vcrpy_cassette_reads_as_the_yaml_constructor_builds_it(path: Path, tmp_path: Path) -> None:
    """Aliases, merge keys, keys that are no strings, tagged scalars, times and binary bodies included."""
    if not path.exists():
        path = tmp_path / path.name
        path.write_text(UNUSUAL_YAML)
    data = path.read_bytes()
    read = [interaction for _, interaction in vcrpy._interactions(path, data)]
    whole = yaml.load(data, Loader=vcrpy._Reader)["interactions"]  # a safe loader (vcrpy.py)
    assert read == whole
    if path.name == "unusual.yaml":
        assert read[1]["request"]["uri"] == "https://api.anthropic.com/v1/messages"
        assert isinstance(read[0]["recorded_at"], datetime)
        assert read[0]["response"]["body"]["string"] == b'{"ok": true}'


def test_a_cassette_whose_yaml_holds_itself_is_unreadable_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("interactions:\n- &loop\n  request: {uri: 'https://x/'}\n  again: *loop\n")
    with pytest.raises(UnreadableError, match=r"loop.yaml: not valid YAML at line 2: found unconstructable recursive"):
        list(vcrpy._interactions(path, path.read_bytes()))
