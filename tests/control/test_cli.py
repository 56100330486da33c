"""`--journal-size` on the command line: the journal of `llmproxy mock` holds what it says, as the command it
runs reads back through the control API; 0 keeps none."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

READ_STATUS = (
    "import json; from llmproxy.control.client import Client; "
    "print(json.dumps(Client.from_environment().status().model_dump(mode='json', by_alias=True)))"
)


@pytest.mark.parametrize(("size", "journal"), [("2", {"capacity": 2, "kept": 0}), ("0", None)])
def test_the_journal_size_is_what_the_option_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: str, journal: dict[str, int] | None
) -> None:
    monkeypatch.setenv("LLMPROXY_HOME", str(tmp_path / "home"))
    run = [sys.executable, "-m", "llmproxy", "mock", "--journal-size", size, "--", sys.executable, "-c", READ_STATUS]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout.splitlines()[-1])
    if journal is None:
        assert status["journal"] is None
    else:
        assert {key: status["journal"][key] for key in journal} == journal
