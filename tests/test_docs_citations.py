"""Every citation a reader of the repository meets can be followed from the repository.

A comment, docstring or doc page may point at the project's own docs (``docs/providers.md#anthropic-messages``)
or at a provider's published documentation; it may not point at notes kept outside the repository (the
design notes and wire-format references the code was first written from) or at an issue of the project's
tracker by its number, which a reader of a clone cannot open. Every docs page cited must exist, and where the
citation names a section (``#anchor``), that heading must be on the page — so renaming a heading without its
citations fails here. The source and prose files are read, not recorded traffic (captured requests, cassettes,
golden outputs), which quote third-party text."""

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("llmproxy", "addons", "docs", "scripts", "tests", ".ci")
FILES = ("README.md", "pyproject.toml", "cassettes/README.md")
PROSE = {".py", ".md", ".toml", ".sh", ".yml", ".yaml", ".txt", ".cfg", ".ini", ".js", ".html"}
SKIPPED = {"__pycache__", "node_modules", ".venv", ".mypy_cache", ".ruff_cache", ".pytest_cache"}

# Notes that live beside the repository, never in it, and this project's tracker numbers. Other projects'
# issues ("vcrpy #989") are public and stay citable; a numbered section sign only ever meant those notes.
# Spelled in pieces, so that this file itself passes a plain search for them.
NOTES = ("DESIGN", "wire-formats", "mitmproxy-notes", "codex-websocket", "user-asks")
TRACKER = "issue"
SECTION = "\N{SECTION SIGN}"
OUTSIDE = re.compile(
    rf"\b(?:{'|'.join(map(re.escape, NOTES))})(?:\.md|: )"
    rf"|\b[Ii]{TRACKER[1:]}s? \d+"
    rf"|{SECTION} ?\d"
)
# `docs/replay.md` or `docs/replay.md#websockets`, not preceded by a name it is the tail of (`openai-docs/SKILL.md`).
DOCS_CITATION = re.compile(r"(?<![\w-])(docs/[\w./-]+?\.md)(?:#([\w-]+))?")
# A Markdown link to a page or a section, relative to the page that holds it: `](replay.md#websockets)`.
MARKDOWN_LINK = re.compile(r"\]\(((?:[\w.-]+/)*[\w.-]+\.md)?(?:#([\w-]+))?\)")


def sources() -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and not SKIPPED & set(path.parts) and (path.suffix in PROSE or path.name == "run"):
                yield path
    for name in FILES:
        yield ROOT / name


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            base = slug(heading.group(1))
            name, n = base, 0
            while name in found:  # GitHub numbers a repeated heading's anchor: -1, -2…
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return frozenset(found)


def broken(target: Path, anchor: str | None) -> str | None:
    """Why a citation of `target` (and its section) cannot be followed, or None when it can."""
    if not target.is_file():
        return "no such file"
    if anchor and anchor not in anchors(target):
        return f"no heading #{anchor} on that page"
    return None


def citations(path: Path, text: str) -> Iterator[tuple[str, Path, str | None]]:
    """(as written, the file it names, the section) for each docs/… citation and each Markdown link."""
    for match in DOCS_CITATION.finditer(text):
        yield match.group(0), ROOT / match.group(1), match.group(2)
    if path.suffix == ".md":
        for match in MARKDOWN_LINK.finditer(text):
            page, anchor = match.group(1), match.group(2)
            if page or anchor:
                yield match.group(0), (path.parent / page) if page else path, anchor


def test_the_files_read_include_every_kind_that_carries_comments_or_prose() -> None:
    read = {relative(path) for path in sources()}
    assert {"pyproject.toml", "README.md", "docs/architecture.md", "llmproxy/chain/chain.py", ".ci/run"} <= read
    assert relative(Path(__file__)) in read


def test_nothing_cites_notes_outside_the_repository_or_a_tracker_number() -> None:
    found = [
        f"{relative(path)}:{number}: {match.group(0)!r} in {line.strip()[:100]!r}"
        for path in sources()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for match in OUTSIDE.finditer(line)
    ]
    assert found == []


def test_every_cited_docs_page_and_section_exists() -> None:
    found = [
        f"{relative(path)}: {written} — {why}"
        for path in sources()
        for written, target, anchor in citations(path, path.read_text())
        if (why := broken(target, anchor))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        (
            "## The adapters (`addons/llmproxy_addons/`, installed as `llmproxy_addons`)",
            "the-adapters-addonsllmproxy_addons-installed-as-llmproxy_addons",
        ),
        ("## What `--allow-host` lets out", "what---allow-host-lets-out"),
        ("### UNUSED_TOOL_SCHEMA", "unused_tool_schema"),
        ("## Watching a run: `--live`, `-v`, `--json`", "watching-a-run---live--v---json"),
    ],
)
def test_anchors_are_made_as_github_makes_them(heading: str, anchor: str) -> None:
    assert slug(heading.lstrip("# ")) == anchor


@pytest.mark.parametrize(
    "text",
    [
        *(f"as {name}.md says" for name in NOTES),
        "over WebSocket (reference/" + NOTES[3] + ".md)",
        f"retried by none of them ({NOTES[1]}: the Stainless SDKs…)",
        f"the intercept stage ({TRACKER} 20)",
        f"what replay serves ({TRACKER.title()}s 5 and 22)",
        f"streamed bodies ({SECTION}2.3)",
    ],
)
def test_a_citation_outside_the_repository_is_caught(text: str) -> None:
    assert OUTSIDE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "a known bug of theirs (vcrpy #989, mitmproxy #6245)",
        "tests/fixtures/captured/codex-websocket-0.169.0-message2.json",
        "scripts/record_examples.py codex-websocket",
        "docs/providers.md#wire-formats-as-the-codecs-read-them",
    ],
)
def test_a_public_issue_or_a_name_in_the_repository_is_not(text: str) -> None:
    assert not OUTSIDE.search(text)
