"""`llmproxy addon-path`: where llmproxy's mitmproxy script is, to load llmproxy into your own mitmproxy."""

import importlib.util
from pathlib import Path

import click

from llmproxy.errors import LlmproxyError

ADAPTERS = "llmproxy_addons"  # the adapters' import name (the repository's addons/ folder)


def script_path() -> Path:
    """The script (`llmproxy_addons/script.py`), found without importing mitmproxy. Raises LlmproxyError when
    the adapters are not installed."""
    spec = importlib.util.find_spec(ADAPTERS)
    if spec is None or not spec.submodule_search_locations:
        raise LlmproxyError(f"cannot find {ADAPTERS}: is llmproxy installed whole?")
    return Path(next(iter(spec.submodule_search_locations))) / "script.py"


@click.command("addon-path")
def addon_path() -> None:
    """Print the path of llmproxy's mitmproxy script, to run llmproxy inside your own mitmproxy:

    \b
        mitmdump -s "$(llmproxy addon-path)" --set llmproxy_replay=cassettes/c.json
        mitmweb  -s "$(llmproxy addon-path)" --set llmproxy_record=cassettes/c.json

    The options (llmproxy_record, llmproxy_replay, llmproxy_mock, llmproxy_record_mode, …) are in
    docs/mitmproxy.md; `mitmdump -s … --options` lists them too.
    """
    try:
        click.echo(script_path())
    except LlmproxyError as error:
        raise click.ClickException(str(error)) from error
