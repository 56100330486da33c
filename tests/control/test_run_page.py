"""docs/control.md's section on load, save and stop runs as written: its Python example, in a folder holding
the files the page shows, in this process, printing what its comments say."""

import contextlib
import io
from pathlib import Path

from tests.control.test_page import PAGE, RUN_SECTION, folder  # noqa: F401 — the fixture
from tests.test_session_page import BLOCK, PRINTED, said


def test_the_save_and_replay_example_runs_and_prints_what_it_says(folder: Path) -> None:  # noqa: F811
    section = PAGE.read_text().split(RUN_SECTION)[1]
    [code] = [code for _, language, code in BLOCK.findall(section) if language == "python"]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, f"{PAGE}, the save and replay example", "exec"), {"__name__": "__main__"})
    for comment in PRINTED.findall(code):
        assert said(comment) in output.getvalue(), (comment, output.getvalue())
    assert (folder / "saved.json").exists()
