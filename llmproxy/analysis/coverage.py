"""What a report or a gate saw of the calls it was asked about, and how to say what it did not.

Two things can keep calls out of sight: `--max-calls N`, which keeps the newest N (the user asked for less),
and recorded exchanges that do not decode (a chat call whose request or answer cannot be read: its tokens,
cost and tool calls are unknown). A report says so in every format; a gate that did not see every call fails
unless `--allow-partial` lets it pass on what it saw — a pass on part of a run says nothing about the rest.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmproxy.words import plural

if TYPE_CHECKING:
    from llmproxy.analysis.report import Report

UNDECODABLE = ("undecodable request", "undecodable response")
"""The reasons an exchange is skipped (`analysis/decode.py`) that hide a chat call, rather than mark an
exchange that is not one (telemetry, a model list, a background poll)."""


@dataclass(frozen=True, slots=True)
class Coverage:
    seen: int  # the calls judged
    left_out: int = 0  # older calls `--max-calls` left out
    max_calls: int = 0
    undecodable: tuple[tuple[str, str, int], ...] = ()  # (file, reason, exchanges)

    @classmethod
    def of(
        cls, seen: int, left_out: int, max_calls: int, skipped: Iterable[tuple[str, Mapping[str, int]]]
    ) -> "Coverage":
        """From the calls seen, those `--max-calls` left out, and each source's skipped exchanges by reason."""
        hidden = tuple(
            (path, reason, count)
            for path, reasons in skipped
            for reason, count in sorted(reasons.items())
            if reason in UNDECODABLE and count
        )
        return cls(seen, left_out, max_calls, hidden)

    @classmethod
    def of_report(cls, report: "Report") -> "Coverage":
        """What a built report covers."""
        skipped = ((source.path, source.skipped) for source in report.sources)
        return cls.of(report.totals.callCount, report.filter.droppedCalls, report.filter.maxCalls, skipped)

    @property
    def undecodable_count(self) -> int:
        return sum(count for _, _, count in self.undecodable)

    @property
    def complete(self) -> bool:
        return not self.left_out and not self.undecodable

    def newest(self) -> str:
        """What `--max-calls` kept: "the newest 100 of 300 calls: --max-calls 100 left out the 200 oldest"."""
        return (
            f"the newest {self.seen:,} of {plural(self.seen + self.left_out, 'call')}: "
            f"--max-calls {self.max_calls} left out the {self.left_out:,} oldest"
        )

    def not_decoded(self) -> str:
        """Exchanges that could not be read: "1 exchange could not be decoded (run.json: undecodable response 1)"."""
        by_file: dict[str, list[str]] = {}
        for path, reason, count in self.undecodable:
            by_file.setdefault(path, []).append(f"{reason} {count:,}")
        where = "; ".join(f"{path}: {', '.join(reasons)}" for path, reasons in by_file.items())
        count = self.undecodable_count
        return f"{plural(count, 'exchange')} could not be decoded ({where})"

    def gaps(self) -> list[str]:
        """A report's lines for what it does not cover (none when it covers every call)."""
        lines = [f"Covers {self.newest()}."] if self.left_out else []
        if self.undecodable:
            whose = "its" if self.undecodable_count == 1 else "their"
            lines.append(f"{self.not_decoded()}: {whose} calls are not counted.")
        return lines

    def gate_gaps(self) -> list[str]:
        """A gate's reasons to fail for what it did not see."""
        hint = " (--allow-partial to pass on what it saw)"
        lines = [f"saw {self.newest()}{hint}"] if self.left_out else []
        if self.undecodable:
            whose = "its" if self.undecodable_count == 1 else "their"
            lines.append(f"{self.not_decoded()}; {whose} calls were not seen{hint}")
        return lines

    def partial_pass(self) -> str:
        """How a gate allowed to pass on part of the run says what it passed on."""
        parts = [f"on the newest {self.seen:,} of {plural(self.seen + self.left_out, 'call')}"] if self.left_out else []
        if self.undecodable:
            count = self.undecodable_count
            parts.append(f"without {plural(count, 'exchange')} that could not be decoded")
        options = ([f"--max-calls {self.max_calls}"] if self.left_out else []) + ["--allow-partial"]
        return f"{', '.join(parts)} ({', '.join(options)})"

    def as_json(self) -> dict[str, Any]:
        return {
            "calls": self.seen,
            "leftOut": self.left_out,
            "undecodable": self.undecodable_count,
            "complete": self.complete,
        }
