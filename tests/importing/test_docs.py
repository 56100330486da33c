"""docs/import.md runs as written: each command of its first example, in order, in a folder holding the files it
names (recordings vcrpy and mitmproxy made of the official SDKs)."""

import re
import shlex
import shutil
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.importing.conftest import Recording
from tests.importing.test_import import run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "import.md"


def commands() -> list[list[str]]:
    block = re.search(r"```sh\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert block is not None
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.slow  # mitmdump writes two of the files
def test_the_pages_example_runs_as_written(
    vcrpy_recordings: dict[str, Recording],
    mitmproxy_recordings: dict[str, Recording],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "tests" / "cassettes").mkdir(parents=True)
    for form, recording in vcrpy_recordings.items():
        shutil.copy(recording.path, tmp_path / "tests" / "cassettes" / f"test_chat_{form}.{form}")
    shutil.copy(mitmproxy_recordings["har"].path, tmp_path / "session.har")
    shutil.copy(mitmproxy_recordings["flows"].path, tmp_path / "session.mitm")
    monkeypatch.chdir(tmp_path)
    for command in commands():
        assert command[:2] == ["llmproxy", "cassette"]
        code, said = run(*command[1:])
        assert code == 0, (command, said)
    assert len(load_cassette(tmp_path / "cassettes" / "imported.json").exchanges) == 8
    assert sorted(path.name for path in (tmp_path / "cassettes" / "from-vcrpy").iterdir()) == [
        "test_chat_json.json",
        "test_chat_yaml.json",
    ]
    assert len(load_cassette(tmp_path / "cassettes" / "browser.json").exchanges) == 8
    assert (tmp_path / "imported.har").stat().st_size > 0
    assert (tmp_path / "test_imported.yaml").read_text().startswith("interactions:\n")
