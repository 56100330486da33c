"""llmproxy installs as a user installs it: every module it imports at run time comes from the standard
library, from llmproxy itself, or from a distribution `pyproject.toml` declares in `dependencies` (not only in
the `dev` extra, which CI installs and users do not). `.ci/run` also installs it without extras into a fresh
virtualenv and runs every command's --help (scripts/check_plain_install.py)."""

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = {"llmproxy": ROOT / "llmproxy", "llmproxy_addons": ROOT / "addons" / "llmproxy_addons"}


def imported_modules() -> dict[str, set[str]]:
    """Top-level modules imported by llmproxy/ and the adapters (addons/llmproxy_addons/), with the files
    importing each."""
    found: dict[str, set[str]] = {}
    for folder in OWN.values():
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    found.setdefault(name.partition(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_dependencies() -> set[str]:
    """The runtime dependencies, and those of any extra a user installs for an optional feature: a module
    needing one is imported only by a run that uses the feature, which scripts/check_plain_install.py holds to."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra, given in project.get("optional-dependencies", {}).items():
        if extra != "dev":
            requirements += given
    return {normalise(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]) for requirement in requirements}


def test_every_third_party_import_is_a_declared_runtime_dependency() -> None:
    distributions = importlib.metadata.packages_distributions()
    declared = declared_dependencies()
    undeclared = {}
    for module, files in imported_modules().items():
        if module in OWN or module in sys.stdlib_module_names:
            continue
        providers = {normalise(name) for name in distributions.get(module, [])}
        if not providers & declared:
            undeclared[module] = (sorted(providers), sorted(files))
    assert undeclared == {}, f"imported but not in [project] dependencies nor a feature's extra: {undeclared}"


def test_the_check_sees_an_undeclared_import() -> None:
    """The check above is not vacuous: it finds the third-party modules llmproxy really imports."""
    modules = imported_modules()
    assert {"mitmproxy", "orjson", "pydantic", "click"} <= modules.keys()
    assert "zstandard" in modules  # decoded bodies: the case a plain install once missed
