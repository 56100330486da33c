"""The one exception tree of llmproxy (docs/architecture.md#conventions).

Callers catch `LlmproxyError` for anything llmproxy raised on purpose; everything else is a bug.
"""


class LlmproxyError(Exception):
    """Base of every error llmproxy raises on purpose: a failed run, exit status 1 unless a subclass says."""

    exit_status = 1


class UsageError(LlmproxyError):
    """A command line that cannot work as written (a malformed option value): exit status 2, as for the
    mistakes the option parser itself finds."""

    exit_status = 2


class CommandError(LlmproxyError):
    """The command to run around cannot be run: exit status 127 when it is not found, 126 when it cannot be
    executed, as a shell says."""

    def __init__(self, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class ParseError(LlmproxyError, ValueError):
    """Bytes or JSON that do not have the shape a decoder expects.

    The message names what was being decoded and where (a JSON path), e.g.
    ``anthropic response: $.content[1].type: expected a string, got 3``; `path` is that JSON path alone, when
    the error has one.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class UnsupportedError(LlmproxyError):
    """A request for something a codec cannot do (e.g. embeddings on Anthropic Messages)."""


class CassetteError(LlmproxyError):
    """A cassette that cannot be read or written; the message names the file and what is wrong where
    (``cassette.json: exchange 3: $.exchanges[2].request.method: Field required``)."""


class MockError(LlmproxyError):
    """An expectations file or script that cannot be used; the message names the file and the JSON path
    (``e.json: $.expectations[2].respond.toolCalls[0].name: Field required``)."""


class ChaosError(LlmproxyError):
    """A chaos profile that cannot be used (a chaos file, a control API request, an `x-llmproxy-chaos`
    header); the message names where and the JSON path (``chaos.json: $.rules[0].chaos.quotaLimit: …``)."""
