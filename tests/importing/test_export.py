"""`llmproxy cassette export`: the way back. A vcrpy cassette it writes is replayed by vcrpy itself to the SDK
that made the original requests; a HAR file it writes imports back to the same exchanges."""

from pathlib import Path

import pytest

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.store import load_cassette
from tests.importing.conftest import KEY, Recording
from tests.importing.sdk_session import session
from tests.importing.test_import import imported, run


def test_an_exported_vcrpy_cassette_replays_in_vcrpy_to_the_same_sdk(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    import vcr

    recording = vcrpy_recordings["yaml"]
    cassette = imported(recording.path, tmp_path)
    exported = tmp_path / "exported.yaml"
    code, said = run("cassette", "export", str(cassette), "--format", "vcrpy", "-o", str(exported))
    assert (code, said) == (0, f"exported 4 exchanges from {cassette} to {exported} (vcrpy)\n")
    assert KEY.encode() not in exported.read_bytes()
    with vcr.VCR(record_mode="none").use_cassette(str(exported)) as played:  # the stand-in API is not asked
        answers = session(recording.base_url, KEY)
    assert answers == recording.answers
    assert played.all_played


@pytest.mark.parametrize("form", ["har", "vcrpy"])
def test_an_exported_cassette_imports_back_to_the_same_exchanges(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path, form: str
) -> None:
    cassette = imported(vcrpy_recordings["yaml"].path, tmp_path)
    exported = tmp_path / f"exported.{'har' if form == 'har' else 'yaml'}"
    assert run("cassette", "export", str(cassette), "--format", form, "-o", str(exported))[0] == 0
    again = tmp_path / "again.json"
    assert run("cassette", "import", str(exported), "-o", str(again))[0] == 0
    before, after = load_cassette(cassette).exchanges, load_cassette(again).exchanges
    assert [e.request.body for e in after] == [e.request.body for e in before]
    assert [e.request.url for e in after] == [e.request.url for e in before]
    assert [decode_exchange(e).completion for e in after] == [decode_exchange(e).completion for e in before]
    assert [e.response.events for e in after if e.response] == [e.response.events for e in before if e.response]


def test_a_cassette_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    code, said = run("cassette", "export", str(missing), "--format", "har", "-o", str(tmp_path / "out.har"))
    assert code == 2
    assert said.startswith("cannot export: ")
    assert said.count("\n") == 1
    assert not (tmp_path / "out.har").exists()


def test_the_format_follows_the_outputs_name_unless_given(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    cassette = imported(vcrpy_recordings["json"].path, tmp_path)
    assert run("cassette", "export", str(cassette), "-o", str(tmp_path / "out.har"))[0] == 0
    assert (tmp_path / "out.har").read_text().startswith('{"log": {"version": "1.2"')
    assert run("cassette", "export", str(cassette), "-o", str(tmp_path / "out.yml"))[0] == 0
    assert (tmp_path / "out.yml").read_text().startswith("interactions:\n")


def test_websocket_exchanges_are_left_out_and_counted(tmp_path: Path) -> None:
    """Codex's Responses over a WebSocket have no form in HAR or vcrpy: the closing line says how many."""
    cassette = Path(__file__).resolve().parents[2] / "cassettes" / "codex-websocket.json"
    output = tmp_path / "codex.har"
    code, said = run("cassette", "export", str(cassette), "-o", str(output))
    assert (code, said) == (
        0,
        f"exported 6 exchanges (3 left out: no form in the format) from {cassette} to {output} (har)\n",
    )
    assert run("cassette", "import", str(output), "-o", str(tmp_path / "again.json"))[0] == 0
    assert all(exchange.websocket is None for exchange in load_cassette(tmp_path / "again.json").exchanges)
