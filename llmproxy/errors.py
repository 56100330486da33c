"""The one exception tree of llmproxy (DESIGN.md §5).

Callers catch `LlmproxyError` for anything llmproxy raised on purpose; everything else is a bug.
"""


class LlmproxyError(Exception):
    """Base of every error llmproxy raises on purpose."""


class ParseError(LlmproxyError, ValueError):
    """Bytes or JSON that do not have the shape a decoder expects.

    The message names what was being decoded and where (a JSON path), e.g.
    ``anthropic response: $.content[1].type: expected a string, got 3``.
    """


class UnsupportedError(LlmproxyError):
    """A request for something a codec cannot do (e.g. embeddings on Anthropic Messages)."""


class CassetteError(LlmproxyError):
    """A cassette that cannot be read or written; the message names the file and what is wrong where
    (``cassette.json: exchange 3: $.exchanges[2].request.method: Field required``)."""


class MockError(LlmproxyError):
    """An expectations file or script that cannot be used; the message names the file and the JSON path
    (``e.json: $.expectations[2].respond.toolCalls[0].name: Field required``)."""
