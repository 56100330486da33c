"""What may import what (docs/architecture.md#what-may-import-what).

The core never imports mitmproxy or the adapters. ruff's banned-api rule (TID251) enforces it for every module
of llmproxy/ but the entry points, which start the adapters; this holds the entry points to doing so only
lazily, inside the functions that start a proxy, and never importing mitmproxy themselves.

Nothing imports itself back: no module of llmproxy/ or addons/ reaches itself again through what it imports,
and no package reaches itself again through another package. Every import counts, wherever it is written (at
the top, inside a function, under `TYPE_CHECKING`): an import put off until a function runs is still a
dependency, and a circle of them is still a circle.

The library is free of the command line: nothing in llmproxy/ (nor the adapters) but the CLI itself imports
`llmproxy.cli`.
"""

import ast
import graphlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
CORE = REPOSITORY / "llmproxy"
ADAPTERS = REPOSITORY / "addons" / "llmproxy_addons"
ENTRY_POINTS = [CORE / "session.py", *sorted((CORE / "cli").glob("*.py"))]
CLI = "llmproxy.cli"
THE_CLI_ITSELF = {CLI, "llmproxy.__main__"}  # `python -m llmproxy` is the `llmproxy` command


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


def project_modules() -> dict[str, Path]:
    """Every module of llmproxy/ and of the adapters, by its dotted name (a package by its `__init__.py`)."""
    modules = {}
    for package, folder in (("llmproxy", CORE), ("llmproxy_addons", ADAPTERS)):
        for path in folder.rglob("*.py"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = project_modules()


def dependencies(name: str) -> Iterator[str]:
    """The project's modules `name` imports, anywhere in it. `from package import module` depends on that
    module, `from module import name` on the module; the packages Python runs on the way there (their
    `__init__.py`) are not counted, as every module of a package would otherwise depend on its package."""
    path = MODULES[name]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `.` is the module's own package, each further dot one up
                package = (name if path.name == "__init__.py" else name.rpartition(".")[0]).split(".")
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # `import a.b.c` of a module, `from a.b import C` of a class
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


IMPORTS = {name: set(dependencies(name)) for name in MODULES}


def package(name: str) -> str:
    """The package a module belongs to: its folder (llmproxy/chain/, llmproxy/chain/stages/…). A module at the
    top of llmproxy/ or of the adapters is its own: those are the layers themselves (`errors`, `plan`,
    `session`; `door`, `run`), not one package."""
    parent = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    return name if parent in {"llmproxy", "llmproxy_addons"} else parent


def nested(one: str, other: str) -> bool:
    """Whether one package holds the other (llmproxy/providers/ and llmproxy/providers/anthropic/): a package's
    modules and its sub-packages may use each other (the registry imports the codecs, which import `base`)."""
    return one.startswith(other + ".") or other.startswith(one + ".")


def circles(edges: dict[str, dict[str, str]]) -> list[str]:
    """The circles among `edges` (node → {node it imports: the import that makes that edge, or ""}), each as
    the imports that make it: one circle, then the next once an edge of it is left out, until there is none."""
    edges = {node: dict(targets) for node, targets in edges.items()}
    found = []
    while True:
        try:
            graphlib.TopologicalSorter({node: set(targets) for node, targets in edges.items()}).prepare()
        except graphlib.CycleError as error:
            nodes: list[str] = error.args[1][::-1]  # graphlib lists it against the direction of the imports
            steps = [
                f"{one} imports {two}" + (f" ({edges[one][two]})" if edges[one][two] else "")
                for one, two in itertools.pairwise(nodes)
            ]
            found.append("\n  ".join(["a circle:", *steps]))
            del edges[nodes[0]][nodes[1]]
        else:
            return found


def test_no_module_imports_itself_back() -> None:
    found = circles({name: dict.fromkeys(targets, "") for name, targets in IMPORTS.items()})
    assert not found, "\n".join(found)


def test_no_package_imports_itself_back() -> None:
    edges: dict[str, dict[str, str]] = {}
    for name, targets in sorted(IMPORTS.items()):
        for target in sorted(targets):
            one, other = package(name), package(target)
            if one != other and not nested(one, other):
                edges.setdefault(one, {}).setdefault(other, f"{name} → {target}")
    found = circles(edges)
    assert not found, "\n".join(found)


def test_the_library_does_not_import_the_cli() -> None:
    offenders = [
        (name, target)
        for name, targets in sorted(IMPORTS.items())
        if not any(name == cli or name.startswith(cli + ".") for cli in THE_CLI_ITSELF)
        for target in sorted(targets)
        if target == CLI or target.startswith(CLI + ".")
    ]
    assert [f"{name} imports {target}" for name, target in offenders] == []
