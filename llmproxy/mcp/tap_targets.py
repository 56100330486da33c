"""Where `llmproxy mcp-tap` records to and answers from outside a run (`--cassette`): a recording of its own,
or a cassette it reads itself. Inside a run, the run's control API does both
(`llmproxy.control.stdio_tap_client`)."""

from pathlib import Path
from typing import Any

from llmproxy.cassette.redact import REDACTOR
from llmproxy.cassette.store import CassetteWriter
from llmproxy.chain.stages.replay import Replaying
from llmproxy.mcp.stdio_replay import answer_from


def cassette_writer(path: Path) -> CassetteWriter:
    """A recording of its own into `path`, kept from the first exchange (raises CassetteError)."""
    writer = CassetteWriter.open(path, REDACTOR)
    writer.start()
    return writer


class CassetteAnswers:
    """Answers from a cassette the tap reads itself."""

    def __init__(self, path: Path, server: str) -> None:
        self.replaying = Replaying.load([path])
        self.server = server

    def answer(self, message: bytes) -> list[Any] | str:
        return answer_from(self.replaying, self.server, message)
