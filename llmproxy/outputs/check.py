"""`llmproxy cassette check --json`."""

from typing import Literal

from pydantic import Field

from llmproxy.cassette.check import FileCheck, Scanned
from llmproxy.outputs import Document, Part


class Finding(Part):
    where: str = Field(description="a JSON path ($.exchanges[0].request.headers[1]), or `line N` in a text file")
    kind: str = Field(description="the kind of secret (the redactor's name for it), or `not decodable`")
    masked: str = Field(description="the value masked: its first characters and its length")


class Undecoded(Part):
    exchange: int
    api: str = Field(description="the API and who served it: `openai chat_completions (deepseek)`")
    part: Literal["request", "response"]
    error: str = Field(description="what the decoder expected, and where")
    path: str | None = Field(description="the JSON path the decoder named")
    excerpt: str = Field(description="the first 200 characters of what did not decode")


class CheckedFile(Part):
    path: str
    kind: Scanned | None = Field(description="what the file was scanned as; null when it could not be read")
    exchanges: int = Field(description="the exchanges scanned in a cassette or journal; 0 for other files")
    findings: list[Finding]
    error: str | None = Field(description="why the file could not be read; null when it was")
    undecoded: list[Undecoded] | None = Field(
        default=None, description="with --decode, the exchanges llmproxy's codecs cannot read; null without it"
    )


class CassetteCheck(Document):
    command: Literal["cassette check"] = "cassette check"
    clean: bool = Field(description="every file was read and nothing secret-looking was found (exit status 0)")
    findingCount: int
    files: list[CheckedFile]


def checked(result: FileCheck) -> CheckedFile:
    findings = [Finding(where=f.where, kind=f.kind, masked=f.masked) for f in result.findings]
    return CheckedFile(
        path=str(result.file), kind=result.kind, exchanges=result.exchanges, findings=findings, error=None
    )


def unreadable(path: str, error: str) -> CheckedFile:
    return CheckedFile(path=path, kind=None, exchanges=0, findings=[], error=error)
