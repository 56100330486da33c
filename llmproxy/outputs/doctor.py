"""`llmproxy doctor --json`."""

from typing import Literal

from pydantic import Field

from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.outputs import Document, Part


class Finding(Part):
    section: Section
    name: str = Field(description="what was checked: a client family, a host, a variable, a CLI")
    status: Status
    detail: str
    fix: str | None = Field(description="what to do; null when there is nothing to do")
    evidence: str | None = Field(description="what the client said (its error, or its answer); null: nothing")


class Doctor(Document):
    command: Literal["doctor"] = "doctor"
    ok: bool = Field(description="nothing failed (exit status 0); warnings may remain")
    checkedCommand: list[str] = Field(description="the command checked (`-- CMD`); empty: this shell")
    environment: dict[str, str] = Field(description="the variables llmproxy sets for the command (names a proxy)")
    findings: list[Finding]


def doctor(command: list[str], environment: dict[str, str], checks: list[Check]) -> Doctor:
    findings = [_finding(check) for check in checks]
    ok = all(check.status is not Status.FAIL for check in checks)
    return Doctor(ok=ok, checkedCommand=command, environment=environment, findings=findings)


def _finding(check: Check) -> Finding:
    fix, evidence = check.fix or None, check.evidence or None
    return Finding(
        section=check.section, name=check.name, status=check.status, detail=check.detail, fix=fix, evidence=evidence
    )
