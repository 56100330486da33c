"""Cassette names from node ids: beside the module, short for long parameter ids, and the same cassette for the
same case when a parametrize list is reordered."""

import re
from pathlib import Path

import pytest

from llmproxy.testing.names import LONGEST, cassette_path

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

SOURCE = """
import pytest

PROMPTS = {prompts}

@pytest.mark.parametrize("prompt", PROMPTS)
def test_prompt(prompt):
    pass

@pytest.mark.parametrize("question", ["why " * 40, "how/so?"])
def test_long(question):
    pass

class TestGroup:
    @pytest.mark.parametrize("n", [1, 2], ids=["one", "two"])
    def test_ids(self, n):
        pass
"""


def named(pytester: pytest.Pytester, prompts: list[object]) -> dict[str, Path]:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function")
    items = pytester.getitems(SOURCE.format(prompts=prompts))
    return {item.nodeid.split("::", 1)[1]: cassette_path(item, None, None) for item in items}


def test_cassettes_are_named_from_the_node_id_beside_the_module(pytester: pytest.Pytester):
    paths = named(pytester, ["a"])
    folder = pytester.path / "cassettes" / "test_cassettes_are_named_from_the_node_id_beside_the_module"
    assert paths["test_prompt[a]"] == folder / "test_prompt[a].json"
    assert paths["TestGroup::test_ids[one]"] == folder / "TestGroup.test_ids[one].json"


def test_long_or_unsafe_ids_are_shortened_with_a_hash(pytester: pytest.Pytester):
    names = [path.name for node, path in named(pytester, ["a"]).items() if node.startswith("test_long")]
    assert all(len(name) <= LONGEST + len(".json") + 12 for name in names)
    assert all(re.fullmatch(r"test_long\[[\w.~,+=@-]+\]\.json", name) for name in names)
    assert len(set(names)) == 2


def test_reordering_values_pytest_names_by_position_keeps_each_cassette(pytester: pytest.Pytester):
    first = [{"role": "user", "content": "hi"}, {"role": "user", "content": "bye"}]
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function")
    pytester.makepyfile(
        test_before=SOURCE.format(prompts=first), test_after=SOURCE.format(prompts=list(reversed(first)))
    )
    items, _ = pytester.inline_genitems()
    name = {item.nodeid: cassette_path(item, None, None).name for item in items}
    # pytest calls them prompt0 and prompt1, by position: the cassettes follow the values instead
    assert name["test_before.py::test_prompt[prompt0]"] == name["test_after.py::test_prompt[prompt1]"]
    assert name["test_before.py::test_prompt[prompt1]"] == name["test_after.py::test_prompt[prompt0]"]
    assert name["test_before.py::test_prompt[prompt0]"] != name["test_before.py::test_prompt[prompt1]"]
    assert name["test_before.py::test_prompt[prompt0]"].startswith("test_prompt[prompt~")


def test_explicit_names_and_the_cassette_dir(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function")
    item = pytester.getitems(SOURCE.format(prompts=["a"]))[0]
    module = Path(str(item.path))
    assert cassette_path(item, "shared", None) == module.parent / "cassettes" / "shared.json"
    assert cassette_path(item, "/abs/c.json", None) == Path("/abs/c.json")
    root = pytester.path / "elsewhere"
    assert cassette_path(item, None, root) == root / module.stem / "test_prompt[a].json"
