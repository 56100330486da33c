"""What a reader of another tool's recording yields: one entry per recorded request, found where.

An entry is either an exchange as if llmproxy had captured it (`RawExchange`: the recorder's own input, so an
import is redacted, converted and stored by the recorder's code) or the reason it could not be read, so that an
import counts and names what it skips and never loses anything silently.
"""

from dataclasses import dataclass

from llmproxy.model.exchange import RawExchange


@dataclass(frozen=True, slots=True)
class Entry:
    where: str  # "file.yaml: interaction 3", "file.har: entry 12"
    exchange: RawExchange | None
    problem: str | None = None  # why `exchange` is None

    @classmethod
    def broken(cls, where: str, problem: str) -> "Entry":
        return cls(where, None, problem)


class UnreadableError(Exception):
    """A whole file that cannot be read as what it claims to be (cut short, not YAML, another version): the
    import stops, writing nothing. The message names the file and, where known, the line."""
