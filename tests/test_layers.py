"""What may import what (docs/architecture.md): the core never imports mitmproxy or the adapters. ruff's
banned-api rule (TID251) enforces it for every module of llmproxy/ but the entry points, which start the
adapters; this holds the entry points to doing so only lazily, inside the functions that start a proxy, and
never importing mitmproxy themselves."""

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "llmproxy"
ENTRY_POINTS = [CORE / "session.py", *sorted((CORE / "cli").glob("*.py"))]


def imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module]
    return []


def top(name: str) -> str:
    return name.split(".", 1)[0]


@pytest.mark.parametrize("path", ENTRY_POINTS, ids=lambda path: str(path.relative_to(CORE)))
def test_an_entry_point_starts_the_adapters_only_lazily_and_never_imports_mitmproxy(path: Path) -> None:
    tree = ast.parse(path.read_text())
    at_module_level = {top(name) for node in tree.body for name in imported(node)}
    anywhere = {top(name) for node in ast.walk(tree) for name in imported(node)}
    assert not {"addons", "llmproxy_addons"} & at_module_level
    assert "mitmproxy" not in anywhere


def test_the_rest_of_the_core_imports_neither_anywhere() -> None:
    """The same as ruff's rule, so the rule's exemptions cannot grow unnoticed."""
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        if path in ENTRY_POINTS:
            continue
        names = {top(name) for node in ast.walk(ast.parse(path.read_text())) for name in imported(node)}
        offenders += [
            f"{path.relative_to(CORE)} imports {name}"
            for name in sorted(names & {"addons", "llmproxy_addons", "mitmproxy"})
        ]
    assert offenders == []


def test_the_library_never_imports_the_command_line() -> None:
    """`llmproxy/cli/` is the command line over the library; the library (the pytest plugin included) reaches
    nothing of it, so that what the plugin and the commands share lives in the library. `__main__.py` is the
    command line's own entry point."""
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        if path.is_relative_to(CORE / "cli") or path == CORE / "__main__.py":
            continue
        names = {name for node in ast.walk(ast.parse(path.read_text())) for name in imported(node)}
        offenders += [
            f"{path.relative_to(CORE)} imports {name}" for name in sorted(names) if name.startswith("llmproxy.cli")
        ]
    assert offenders == []
