"""What `llmproxy doctor` found: one `Check` per thing it looked at, each with a fix when it is not fine."""

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"  # works, but something may surprise
    FAIL = "fail"  # will not work as it is: the fix says what to do
    SKIPPED = "skipped"  # nothing to check here (a client that is not installed)


class Section(StrEnum):
    CA = "CA"
    PROXY = "proxy variables"
    TRUST = "trust"
    HOSTS = "provider hosts"
    CLIS = "coding CLIs"


@dataclass(frozen=True, slots=True)
class Check:
    section: Section
    name: str
    status: Status
    detail: str
    fix: str = ""
    evidence: str = ""  # what the client said (an error), shown with -v
