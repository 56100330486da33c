from pathlib import Path

import orjson
from click.testing import CliRunner

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.cli import main
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def check(*paths: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["cassette", "check", *map(str, paths)])
    return result.exit_code, result.output


def test_a_recorded_cassette_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.add(exchange(request({"messages": [{"role": "user", "content": f"key {ANTHROPIC_KEY}"}]}), response()))
    writer.close()
    assert check(path) == (0, "")


def test_secrets_are_reported_with_their_json_path_masked(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    document = {
        "exchanges": [
            {"request": {"headers": ["authorization: Bearer test-token", "x-api-key: <redacted:x-api-key:0011aabb>"]}},
            {"notes": [f"token {GITHUB_TOKEN} here"], "pair": ["Cookie", "a=b"]},
        ]
    }
    path.write_bytes(orjson.dumps(document))
    code, output = check(path)
    assert code == 1
    assert output.splitlines() == [
        f"{path}:$.exchanges[0].request.headers[0]: header authorization: Beare…(17 chars)",
        f"{path}:$.exchanges[1].notes[0]: github: ghp_A1…(40 chars)",
        f"{path}:$.exchanges[1].pair[1]: header cookie: a…(3 chars)",
        "3 secret-looking values found",
    ]
    assert GITHUB_TOKEN not in output


def test_journals_and_text_files_are_scanned_by_line(tmp_path: Path) -> None:
    journal = tmp_path / "c.json.journal"
    journal.write_text('{"llmproxy_journal": 1}\n{"body": "' + ANTHROPIC_KEY + '"}\n{"unfinished')
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"\xff binary\nexport KEY=" + ANTHROPIC_KEY.encode() + b"\n")
    code, output = check(journal, notes)
    assert code == 1
    assert f"{journal}:line 2: $.body: sk-ant: sk-ant…(109 chars)" in output
    assert f"{notes}:line 2: sk-ant: sk-ant…(109 chars)" in output


def test_unreadable_files_exit_2(tmp_path: Path) -> None:
    clean = tmp_path / "clean.json"
    clean.write_text('{"a": "<redacted:sk-ant:0011aabb>"}')
    code, output = check(clean, tmp_path / "missing.json")
    assert code == 2
    assert "missing.json: cannot read: No such file or directory" in output
