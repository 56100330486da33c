"""What `cassette import` does with input it cannot read whole: one line and nothing written for a file it cannot
read at all; a counted skip naming the file and entry for one entry it cannot read; other traffic counted."""

import shutil
from pathlib import Path

import orjson
import pytest

from llmproxy.cassette.store import load_cassette
from tests.importing.conftest import Recording
from tests.importing.test_import import run


def test_a_truncated_yaml_cassette_stops_the_import_and_writes_nothing(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    whole = vcrpy_recordings["yaml"].path
    cut = tmp_path / "cut.yaml"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3] + b"\n  - {unclosed: [\n")
    output = tmp_path / "out.json"
    code, said = run("cassette", "import", str(whole), str(cut), "-o", str(output))
    assert code == 2
    assert said.startswith(f"cannot import: {cut}: not valid YAML at line ")
    assert said.endswith("; nothing written\n")
    assert said.count("\n") == 1
    assert not output.exists()
    assert list(tmp_path.iterdir()) == [cut]  # no journal, no temporary file left


def test_an_existing_cassette_is_left_as_it_was_when_an_import_fails(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    output = tmp_path / "out.json"
    assert run("cassette", "import", str(vcrpy_recordings["json"].path), "-o", str(output))[0] == 0
    before = output.read_bytes()
    broken = tmp_path / "broken.har"
    broken.write_text('{"log": {"version": "1.2", "entries": [{"request": ')
    code, said = run("cassette", "import", str(vcrpy_recordings["yaml"].path), str(broken), "-o", str(output))
    assert code == 2
    assert said == f"cannot import: {broken}: not a complete HAR file: parse error: premature EOF; nothing written\n"
    assert output.read_bytes() == before


def test_a_flow_file_mitmproxy_cannot_read_is_one_line(tmp_path: Path) -> None:
    newer = tmp_path / "newer.mitm"
    newer.write_bytes(b"45:7:version;2:99#4:type;4:http;3:foo;3:bar;}")
    code, said = run("cassette", "import", str(newer), "-o", str(tmp_path / "out.json"))
    assert code == 2
    assert said.startswith(f"cannot import: {newer}: not a mitmproxy flow file mitmproxy can read: ")
    assert said.count("\n") == 1


@pytest.mark.slow  # mitmdump writes the HAR
def test_broken_entries_are_skipped_counted_and_named(
    mitmproxy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    har = orjson.loads(mitmproxy_recordings["har"].path.read_bytes())
    del har["log"]["entries"][1]["request"]["url"]
    har["log"]["entries"][2]["response"]["status"] = "teapot"
    edited = tmp_path / "edited.har"
    edited.write_bytes(orjson.dumps(har))
    output = tmp_path / "out.json"
    code, said = run("cassette", "import", str(edited), "-o", str(output))
    assert code == 0
    assert said.splitlines()[-3:] == [
        "skipped 2 entries that could not be read:",
        f"  {edited}: entry 1: missing field 'url'",
        f"  {edited}: entry 2: invalid literal for int() with base 10: 'teapot'",
    ]
    assert said.startswith(f"imported 2 exchanges to {output} (anthropic 1, openai 1; 1 streamed, 1 not)")


@pytest.mark.slow  # mitmdump writes the HAR
def test_other_traffic_is_dropped_and_counted_unless_kept(
    mitmproxy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    har = orjson.loads(mitmproxy_recordings["har"].path.read_bytes())
    page = orjson.loads(orjson.dumps(har["log"]["entries"][0]))
    page["request"].update(method="GET", url="https://example.com/index.html", postData=None)
    page["response"]["content"] = {"size": 5, "mimeType": "text/html", "text": "hello"}
    har["log"]["entries"].insert(0, page)
    edited = tmp_path / "with-page.har"
    edited.write_bytes(orjson.dumps(har))
    code, said = run("cassette", "import", str(edited), "-o", str(tmp_path / "llm.json"))
    assert code == 0
    assert "dropped 1 request to no LLM API (example.com 1): --keep-other keeps them" in said
    code, said = run("cassette", "import", str(edited), "-o", str(tmp_path / "all.json"), "--keep-other")
    assert code == 0
    assert said.startswith(f"imported 5 exchanges to {tmp_path / 'all.json'} (anthropic 2, openai 2, other 1;")


def test_a_folder_imports_into_one_cassette_or_one_each(vcrpy_recordings: dict[str, Recording], tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for recording in vcrpy_recordings.values():
        shutil.copy(
            recording.path, folder / recording.path.name.replace("test_session", f"test_{recording.path.suffix[1:]}")
        )
    code, said = run("cassette", "import", str(folder), "-o", str(tmp_path / "one.json"))
    assert code == 0
    assert said.startswith("imported 8 exchanges")
    each = tmp_path / "each"
    code, said = run("cassette", "import", str(folder), "-o", str(each), "--per-file")
    assert code == 0, said
    assert sorted(path.name for path in each.iterdir()) == ["test_json.json", "test_yaml.json"]
    assert said.count("imported 4 exchanges") == 2
    code, said = run("cassette", "import", str(folder), "-o", str(each), "--per-file")
    assert (code, said) == (
        2,
        f"cannot import: {each / 'test_json.json'} exists: --rewrite replaces it; nothing written\n",
    )
    assert run("cassette", "import", str(folder), "-o", str(each), "--per-file", "--rewrite")[0] == 0


def test_an_import_of_nothing_writes_nothing(tmp_path: Path) -> None:
    har = tmp_path / "page.har"
    entry = {
        "startedDateTime": "2026-05-01T12:00:00.000Z",
        "time": 5,
        "request": {"method": "GET", "url": "https://example.com/", "httpVersion": "h2", "headers": []},
        "response": {"status": 200, "statusText": "", "httpVersion": "h2", "headers": [], "content": {"text": "hi"}},
        "timings": {"wait": 4, "receive": 1},
    }
    har.write_bytes(orjson.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    output = tmp_path / "out.json"
    code, said = run("cassette", "import", str(har), "-o", str(output))
    assert code == 0
    assert said.splitlines() == [
        f"imported nothing: {output} is not written",
        "dropped 1 request to no LLM API (example.com 1): --keep-other keeps them",
    ]
    assert not output.exists()


def test_a_per_file_import_that_fails_leaves_no_folder(vcrpy_recordings: dict[str, Recording], tmp_path: Path) -> None:
    cut = tmp_path / "test_cut.yaml"
    cut.write_bytes(vcrpy_recordings["yaml"].path.read_bytes()[:300] + b"\n  - {unclosed: [\n")
    each = tmp_path / "each"
    code, said = run("cassette", "import", str(vcrpy_recordings["yaml"].path), str(cut), "--per-file", "-o", str(each))
    assert code == 2
    assert said.startswith(f"cannot import: {cut}: not valid YAML at line ")
    assert not each.exists()


def test_a_gzip_compressed_yaml_cassette_imports_as_its_yaml(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    """As LangChain keeps its cassettes (`.yaml.gz`); its own cassette is named without either suffix."""
    import gzip

    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "test_chat.yaml.gz").write_bytes(gzip.compress(vcrpy_recordings["yaml"].path.read_bytes()))
    each = tmp_path / "each"
    code, said = run("cassette", "import", str(folder), "--per-file", "-o", str(each))
    assert code == 0, said
    assert said.startswith(f"imported 4 exchanges to {each / 'test_chat.json'}")
    (folder / "test_cut.yaml.gz").write_bytes(gzip.compress(b"interactions: []\n")[:12])
    code, said = run("cassette", "import", str(folder / "test_cut.yaml.gz"), "-o", str(tmp_path / "cut.json"))
    assert code == 2
    assert said.startswith(f"cannot import: {folder / 'test_cut.yaml.gz'}: not a complete gzip file (")


def test_an_entry_skipped_for_its_url_never_shows_the_url(tmp_path: Path) -> None:
    """A URL may hold a key in its query: the skip says what is wrong with it, not what it is."""
    har = tmp_path / "odd.har"
    entry = {
        "startedDateTime": "2026-05-01T12:00:00.000Z",
        "request": {
            "method": "GET",
            "url": "ftp://files.example/?key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "headers": [],
        },
        "response": {"status": 200, "headers": [], "content": {}},
    }
    har.write_bytes(orjson.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    code, said = run("cassette", "import", str(har), "-o", str(tmp_path / "out.json"))
    assert code == 0
    assert f"  {har}: entry 0: a 'ftp' URL, not an absolute http(s) one" in said.splitlines()
    assert "AIza" not in said


def test_a_request_never_answered_is_counted_or_kept_as_record_does(tmp_path: Path) -> None:
    har = tmp_path / "refused.har"
    entry = {
        "startedDateTime": "2026-05-01T12:00:00.000Z",
        "time": 5,
        "request": {
            "method": "POST",
            "url": "https://api.openai.com/v1/chat/completions",
            "headers": [],
            "postData": {"mimeType": "application/json", "text": '{"model": "gpt-5", "messages": []}'},
        },
        "response": {"status": 0, "headers": [], "content": {}, "_error": "net::ERR_CONNECTION_REFUSED"},
    }
    har.write_bytes(orjson.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    output = tmp_path / "out.json"
    code, said = run("cassette", "import", str(har), "-o", str(output))
    assert code == 0
    assert said.splitlines()[0] == (
        f"imported nothing to {output}: the upstream answered none of 1 request; {output} is not written"
    )
    assert not output.exists()
    code, said = run("cassette", "import", str(har), "-o", str(output), "--record-unanswered")
    assert code == 0
    assert said == f"imported 1 exchange to {output} (openai 1; 0 streamed, 1 not; 1 failed)\n"
    assert [exchange.error for exchange in load_cassette(output).exchanges] == ["net::ERR_CONNECTION_REFUSED"]
