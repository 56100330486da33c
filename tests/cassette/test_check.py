import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.cli import main
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response
from tests.secret_corpus import FIELDS, SHAPES, field_values

DOCS = Path(__file__).resolve().parents[2] / "docs" / "json"
QUICKSTART = Path(__file__).resolve().parents[2] / "cassettes" / "quickstart.json"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def check(*paths: Path) -> tuple[int, str]:
    """The exit status, and the findings and what was checked (stdout and stderr, as a terminal shows them)."""
    result = CliRunner().invoke(main, ["cassette", "check", *map(str, paths)])
    return result.exit_code, result.output


def check_json(*paths: Path) -> tuple[int, dict[str, Any]]:
    """The exit status and the --json document, validated against its published schema."""
    result = CliRunner().invoke(main, ["cassette", "check", "--json", *map(str, paths)])
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads((DOCS / "cassette-check.schema.json").read_text()))
    return result.exit_code, document


def test_a_recorded_cassette_is_clean_and_says_what_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.add(exchange(request({"messages": [{"role": "user", "content": f"key {ANTHROPIC_KEY}"}]}), response()))
    writer.add(exchange(request({"messages": [{"role": "user", "content": "hello"}]}), response()))
    writer.close()
    assert check(path) == (0, f"checked {path} (cassette, 2 exchanges): no secret-looking values\n")
    assert check_json(path) == (
        0,
        {
            "schemaVersion": 1,
            "command": "cassette check",
            "clean": True,
            "findingCount": 0,
            "files": [
                {
                    "path": str(path),
                    "kind": "cassette",
                    "exchanges": 2,
                    "findings": [],
                    "error": None,
                    "undecoded": None,
                }
            ],
        },
    )


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
        f"{path}:$.exchanges[0].request.headers[0]: authorization: tes…(10 chars)",
        f"{path}:$.exchanges[1].notes[0]: github: ghp_A1…(40 chars)",
        f"{path}:$.exchanges[1].pair[1]: cookie: a…(3 chars)",
        f"checked {path} (JSON document): 3 secret-looking values found",
    ]
    assert GITHUB_TOKEN not in output
    code, document = check_json(path)
    assert code == 1
    assert (document["clean"], document["findingCount"]) == (False, 3)
    assert document["files"][0]["findings"][1] == {
        "where": "$.exchanges[1].notes[0]",
        "kind": "github",
        "masked": "ghp_A1…(40 chars)",
    }


def journal_line(exchange_id: int = 1, text: str = "hello") -> bytes:
    """One exchange of the quickstart cassette as a journal line, its question replaced by `text`."""
    stored = orjson.loads(QUICKSTART.read_bytes())["exchanges"][0]
    stored["id"] = exchange_id
    stored["request"]["body"]["json"]["messages"] = [{"role": "user", "content": text}]
    return orjson.dumps(stored) + b"\n"


def test_journals_and_text_files_are_scanned_by_line(tmp_path: Path) -> None:
    journal = tmp_path / "c.json.journal"
    journal.write_bytes(b'{"llmproxy_journal": 1}\n' + journal_line(1, f"key {ANTHROPIC_KEY}") + b'{"unfinished')
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"\xff binary\nexport KEY=" + ANTHROPIC_KEY.encode() + b"\n")
    code, output = check(journal, notes)
    assert code == 1
    assert f"{journal}:line 2: $.request.body.json.messages[0].content: sk-ant: sk-ant…(109 chars)" in output
    assert f"{notes}:line 2: sk-ant: sk-ant…(109 chars)" in output
    assert f"checked {journal} (journal, 1 exchange): 1 secret-looking value found" in output
    assert f"checked {notes} (text): 1 secret-looking value found" in output
    assert "checked 2 files: 2 secret-looking values found" in output


def test_unreadable_files_exit_2(tmp_path: Path) -> None:
    clean = tmp_path / "clean.json"
    clean.write_text('{"a": "<redacted:sk-ant:0011aabb>"}')
    code, output = check(clean, tmp_path / "missing.json")
    assert code == 2
    assert "missing.json: cannot read: No such file or directory" in output
    assert "checked 1 file, 1 unreadable: no secret-looking values" in output
    code, document = check_json(clean, tmp_path / "missing.json")
    assert (code, document["clean"]) == (2, False)
    assert document["files"][1] == {
        "path": str(tmp_path / "missing.json"),
        "kind": None,
        "exchanges": 0,
        "findings": [],
        "error": "No such file or directory",
        "undecoded": None,
    }


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (QUICKSTART.read_bytes()[:3000], "invalid JSON at line "),
        (b'{"llmproxy_cassette": 1, "exchanges": [{"id": 1, "request"', "invalid JSON at line 1, column 59"),
        (QUICKSTART.read_bytes().replace(b'"exchanges": [', b'"exchanges": [}', 1), "invalid JSON at line 3"),
        (b"", "invalid JSON at line 1, column 1: Input is a zero-length, empty document"),
        (b'{"llmproxy_cassette": 1, "exchanges": {"id": 1}}', "$.exchanges: expected a list, got an object"),
    ],
    ids=["truncated", "truncated-one-line", "corrupt", "empty", "not-a-list"],
)
def test_a_cassette_that_cannot_be_read_is_never_called_clean(tmp_path: Path, content: bytes, reason: str) -> None:
    """It could not be checked: one line naming the file and why, exit 2 — never "no secret-looking values"."""
    path = tmp_path / "c.json"
    path.write_bytes(content)
    code, output = check(path)
    assert code == 2
    assert output.startswith(f"{path}: cannot check: {reason}"), output
    assert output.count("\n") == 1, output
    code, document = check_json(path)
    assert (code, document["clean"]) == (2, False)
    assert document["files"][0]["error"].startswith(reason)


def cassette(*exchanges: dict[str, object]) -> bytes:
    started = {"timings": {"started_at": "2026-05-01T12:00:00Z"}}
    listed = [{"id": n, **started, **e} for n, e in enumerate(exchanges, start=1)]
    return orjson.dumps({"llmproxy_cassette": 1, "exchanges": listed})


def test_everything_the_recorder_redacts_by_name_is_found(tmp_path: Path) -> None:
    """Fields, query keys and headers secret by their name alone (no shape): what recording redacts."""
    path = tmp_path / "c.json"
    request_part = {
        "method": "POST",
        "url": "https://api.example.com/v1/x?access_token=abc123def&api_key=plainletters&units=metric",
        "http_version": "HTTP/1.1",
        "headers": ["x-auth-token: opaque-value", "content-type: application/json"],
        "body": {"json": FIELDS},
    }
    path.write_bytes(cassette({"request": request_part}))
    code, output = check(path)
    assert code == 1
    assert output.count("\n") - 1 == len(field_values()) + 3  # the fields, two query keys, a header
    for where in ("request.url", "request.headers[0]", "request.body.json.config.nested.api_key"):
        assert f"$.exchanges[0].{where}:" in output
    assert all(value not in output for value in field_values().values())


def test_a_key_split_across_stream_events_is_found(tmp_path: Path) -> None:
    key = SHAPES["github"]
    pieces = ["my key: ", key[:9], key[9:20], key[20:], "."]
    events = [
        {
            "t_ms": i,
            "event": "content_block_delta",
            "data": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        }
        for i, p in enumerate(pieces)
    ]
    response_part = {
        "status": 200,
        "reason": "OK",
        "http_version": "HTTP/1.1",
        "headers": ["content-type: text/event-stream"],
        "events": events,
    }
    path = tmp_path / "c.json"
    path.write_bytes(
        cassette(
            {
                "request": {"method": "POST", "url": "https://h/", "http_version": "1.1", "headers": []},
                "response": response_part,
            }
        )
    )
    code, output = check(path)
    assert code == 1
    assert "$.exchanges[0].response.events[1].data.delta.text: github:" in output
    assert key[9:20] not in output


def test_a_body_not_decodable_fails_the_check(tmp_path: Path) -> None:
    response_part = {
        "status": 200,
        "reason": "OK",
        "http_version": "HTTP/1.1",
        "headers": ["content-encoding: gzip"],
        "body": {"base64": "AAEC", "not_decodable": "gzip: incorrect header check"},
    }
    path = tmp_path / "c.json"
    path.write_bytes(
        cassette(
            {
                "request": {"method": "GET", "url": "https://h/", "http_version": "1.1", "headers": []},
                "response": response_part,
            }
        )
    )
    code, output = check(path)
    assert code == 1
    assert "$.exchanges[0].response.body: not decodable: gzip: incorrect header check" in output


def conflicted(text: bytes, at: int) -> bytes:
    """`text` with a merge conflict left in it: its line `at` (1-based) on, as git writes one."""
    lines = text.splitlines(keepends=True)
    ours, theirs = lines[at - 1 : at + 1], lines[at - 1 : at + 1]
    conflict = [b"<<<<<<< HEAD\n", *ours, b"=======\n", *theirs, b">>>>>>> other-branch\n"]
    return b"".join([*lines[: at - 1], *conflict, *lines[at + 1 :]])


JOURNAL_HEAD = b'{"llmproxy_journal": 1, "owner": "pid 1: llmproxy record"}\n'


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("c.json", conflicted(QUICKSTART.read_bytes(), 6), "merge conflict markers at line 6"),
        (
            "c.json.journal",
            conflicted(JOURNAL_HEAD + journal_line(1) + journal_line(2), 2),
            "merge conflict markers at line 2",
        ),
        (
            "c.json",
            QUICKSTART.read_bytes().replace(b'"llmproxy_cassette": 1', b'"llmproxy_cassette": 2'),
            "unsupported cassette version 2 (this llmproxy reads 1)",
        ),
        (
            "c.json",
            QUICKSTART.read_bytes().replace(b'"status": 200', b'"status": "200"'),
            'exchange 1: $.exchanges[0].response.status: expected a number, got the string "200"',
        ),
        (
            "c.json",
            QUICKSTART.read_bytes().replace(b'"id": 1,', b'"id": "1",', 1),
            'exchange 1: $.exchanges[0].id: expected a number, got the string "1"',
        ),
        (
            "c.json.journal",
            JOURNAL_HEAD + journal_line(1).replace(b'"id":1,', b'"id":"1",'),
            'line 2: $.id: expected a number, got the string "1"',
        ),
        ("c.json.journal", b'{"llmproxy_journal": 7}\n' + journal_line(1), "not an llmproxy journal"),
        (
            "c.json.journal",
            b"just some text\n",
            "invalid JSON at line 1, column 1: unexpected character, expected a JSON value",
        ),
    ],
    ids=[
        "conflict",
        "conflict-in-journal",
        "version-2",
        "string-status",
        "string-id",
        "journal-string-id",
        "journal-version",
        "not-a-journal",
    ],
)
def test_a_file_that_cannot_be_read_as_a_cassette_fails_in_one_line(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    """What a pre-commit hook must stop: one line naming the file and why, exit 2, for text and JSON alike."""
    path = tmp_path / name
    path.write_bytes(content)
    code, output = check(path)
    assert (code, output) == (2, f"{path}: cannot check: {reason}\n")
    code, document = check_json(path)
    assert (code, document["clean"], document["files"][0]["error"]) == (2, False, reason)


def test_a_journal_left_by_a_killed_recorder_is_checked_whole(tmp_path: Path) -> None:
    """Its unfinished last line is what a kill leaves (readers pass over it): still scanned, as text."""
    journal = tmp_path / "c.json.journal"
    journal.write_bytes(JOURNAL_HEAD + journal_line(1) + b'{"id": 2, "request": {"notes": "' + ANTHROPIC_KEY.encode())
    code, output = check(journal)
    assert code == 1
    assert f"{journal}:line 3: sk-ant: sk-ant…(109 chars)" in output
    assert f"checked {journal} (journal, 1 exchange): 1 secret-looking value found" in output


def a_tree(tmp_path: Path) -> Path:
    """cassettes/ with a clean cassette, a journal holding a key, a JSON document and a text file, a level down."""
    root = tmp_path / "cassettes"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "a.json").write_bytes(QUICKSTART.read_bytes())
    (root / "agent" / "b.json.journal").write_bytes(JOURNAL_HEAD + journal_line(1, f"key {ANTHROPIC_KEY}"))
    (root / "settings.json").write_text('{"retries": 2}')
    (root / "notes.txt").write_text(f"export KEY={ANTHROPIC_KEY}\n")
    return root


def test_a_folder_is_searched_for_cassettes_and_journals(tmp_path: Path) -> None:
    root = a_tree(tmp_path)
    journal = root / "agent" / "b.json.journal"
    code, output = check(root)
    assert code == 1
    assert output.splitlines() == [
        f"checked {root / 'agent' / 'a.json'} (cassette, 1 exchange): no secret-looking values",
        f"{journal}:line 2: $.request.body.json.messages[0].content: sk-ant: sk-ant…(109 chars)",
        f"checked {journal} (journal, 1 exchange): 1 secret-looking value found",
        f"checked {root / 'settings.json'} (JSON document): no secret-looking values",
        "checked 3 files: 1 secret-looking value found",
    ]


def test_globs_are_expanded_as_report_and_verify_expand_them(tmp_path: Path) -> None:
    """A quoted glob (a CI step, a shell without `**`): the files it matches, folders among them searched."""
    root = a_tree(tmp_path)
    code, output = check(Path(f"{root}/**/*.journal"))
    assert code == 1
    assert f"checked {root / 'agent' / 'b.json.journal'} (journal, 1 exchange)" in output
    assert "a.json" not in output
    code, output = check(Path(f"{root}/agen?"))
    assert "checked 2 files" in output
    report = CliRunner().invoke(main, ["report", f"{root}/**/*.json", "--format", "csv"])
    assert report.exit_code == 0, report.output
    assert "claude-haiku-4-5" in report.stdout
    verify = CliRunner().invoke(main, ["verify", "cost", f"{root}/*/a.*", "--max-usd", "1"])
    assert verify.exit_code == 0, verify.output


@pytest.mark.parametrize("given", ["empty", "nothing-*.json"])
def test_nothing_to_check_is_not_clean(tmp_path: Path, given: str) -> None:
    (tmp_path / "empty").mkdir()
    path = tmp_path / given
    code, output = check(path)
    assert code == 2
    assert output.splitlines()[0].startswith(f"{path}: cannot ")


def test_the_committed_cassettes_hold_no_secret() -> None:
    """The examples are recorded with key-shaped placeholders (scripts/record_examples.py): none may reach a
    committed cassette, which is what a user's pre-commit hook would refuse."""
    code, out = check(Path(__file__).resolve().parents[2] / "cassettes")
    assert code == 0, out
    assert out.endswith("no secret-looking values\n")


def _encoded(data: bytes, encoding: str) -> bytes:
    """`data` content-encoded as a server would send it under `Content-Encoding: encoding` (stacked: in order)."""
    import gzip
    import zlib

    import brotli  # type: ignore[import-untyped]

    for name in (part.strip() for part in encoding.split(",")):
        data = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress}[name](data)
    return data


def answered(tmp_path: Path, response_part: dict[str, Any]) -> Path:
    """A cassette of one POST answered with `response_part`."""
    path = tmp_path / "c.json"
    request_part = {"method": "POST", "url": "https://h/", "http_version": "1.1", "headers": []}
    path.write_bytes(cassette({"request": request_part, "response": response_part}))
    return path


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "deflate, gzip"])
@pytest.mark.parametrize("declared", ["content_encoding", "header"])
def test_a_key_inside_a_content_encoded_body_is_found(tmp_path: Path, encoding: str, declared: str) -> None:
    """A hand-written or imported cassette may keep a body as it was on the wire, still encoded: the check
    undoes the encoding before scanning, as the recorder would have before redacting."""
    body = orjson.dumps({"content": [{"type": "text", "text": f"use {GITHUB_TOKEN}"}]})
    response_part: dict[str, Any] = {
        "status": 200,
        "reason": "OK",
        "http_version": "HTTP/1.1",
        "headers": ["content-type: application/json"],
        "body": {"base64": base64.b64encode(_encoded(body, encoding)).decode()},
    }
    if declared == "header":
        response_part["headers"].append(f"content-encoding: {encoding}")
    else:
        response_part["content_encoding"] = encoding
    path = answered(tmp_path, response_part)
    code, output = check(path)
    assert code == 1, output
    assert f"{path}:$.exchanges[0].response.body: github: ghp_A1…(40 chars)" in output
    assert GITHUB_TOKEN not in output


def test_a_clean_content_encoded_body_stays_clean(tmp_path: Path) -> None:
    response_part: dict[str, Any] = {
        "status": 200,
        "reason": "OK",
        "http_version": "HTTP/1.1",
        "headers": ["content-type: application/json", "content-encoding: gzip"],
        "body": {"base64": base64.b64encode(_encoded(b'{"text": "nothing secret"}', "gzip")).decode()},
    }
    path = answered(tmp_path, response_part)
    assert check(path)[0] == 0
