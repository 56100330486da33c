"""Everything a report quotes from a recording goes through the cassette redactor first.

Cassettes are redacted when written, but a report may read one recorded with redaction off, or a secret
the redactor learnt to recognise since: the report redacts again (redacting twice changes nothing) and
counts the secrets it replaced.
"""

from typing import Any

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.secrets import PLACEHOLDER


class Scrubber:
    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redactor = redactor or Redactor()
        self.replaced = 0

    def text(self, text: str) -> str:
        redacted = self._redactor.text(text)
        if redacted != text:
            self.replaced += max(0, len(PLACEHOLDER.findall(redacted)) - len(PLACEHOLDER.findall(text)))
        return redacted

    def json(self, value: Any) -> Any:
        redacted = self._redactor.json(value)
        if redacted != value:
            self.replaced += max(1, len(PLACEHOLDER.findall(repr(redacted))) - len(PLACEHOLDER.findall(repr(value))))
        return redacted
