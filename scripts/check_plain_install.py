"""Install llmproxy as a user does — `pip install .`, no extras — into a fresh virtualenv, then import every
module of `llmproxy` and `llmproxy_addons` and show the `--help` of every command and subcommand (as each group
lists them: `list_commands`, `get_command`), from a directory where the source checkout is not importable. CI
runs it (.ci/run): the test suite installs the `dev` extra, which would hide an import only a dev dependency
provides.

The installed `llmproxy` script runs twice (`--help`, `addon-path`); every command's help is then asked of the
same `main` in one process, through click, which is what the script runs: a process per command would cost a
second each to prove nothing more. pip skips compiling bytecode: the imports compile what they load, and
compiling every installed package would double the install's cost.

    python scripts/check_plain_install.py            # a temporary virtualenv, removed afterwards
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INSIDE = r"""
import importlib, pkgutil, subprocess, sys, warnings
from pathlib import Path

warnings.simplefilter("ignore", DeprecationWarning)  # mitmproxy's dependencies, as in tests/mitm.py
import importlib.util
import llmproxy, llmproxy_addons
assert importlib.util.find_spec("addons") is None, "a generic top-level `addons` package was installed"
page = Path(llmproxy.__file__).parent / "ui"  # the dashboard's files ship in the wheel (docs/ui.md)
for name in ("index.html", "app.js", "style.css", "views/traffic.js"):
    assert (page / name).is_file(), f"the wheel lacks the dashboard's {name}"
for package in (llmproxy, llmproxy_addons):
    assert not Path(package.__file__).is_relative_to(sys.argv[1]), f"imported from the checkout: {package.__file__}"
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if module.name != "llmproxy.__main__":
            importlib.import_module(module.name)
import click
from click.testing import CliRunner
from llmproxy.cli import main


def paths(command, prefix):  # every command and subcommand, as each group lists and loads them (lazily at the top)
    yield prefix
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=prefix[-1] if prefix else "llmproxy")
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None, f"{' '.join([*prefix, name])}: listed but not found"
            yield from paths(sub, [*prefix, name])

script = Path(sys.executable).with_name("llmproxy")
run = subprocess.run([str(script), "--help"], capture_output=True, text=True)
assert run.returncode == 0 and "Usage:" in run.stdout, (run.stdout, run.stderr)
commands = list(paths(main, []))
for path in commands:
    shown = CliRunner().invoke(main, [*path, "--help"], prog_name="llmproxy")
    assert shown.exit_code == 0 and "Usage:" in shown.output, (path, shown.output, shown.exception)
where = subprocess.run([str(script), "addon-path"], capture_output=True, text=True, check=True).stdout.strip()
assert Path(where).is_file() and Path(where).is_relative_to(sys.prefix), f"addon-path outside the install: {where}"
names = ", ".join(" ".join(path) or "llmproxy" for path in commands)
print(f"imported every module; --help of {len(commands)} commands: {names}")

import re, urllib.request  # the installed dashboard serves its files: `llmproxy ui` on a committed cassette
cassette = Path(sys.argv[1]) / "cassettes" / "quickstart.json"
with subprocess.Popen([str(script), "ui", str(cassette), "--no-open"], stderr=subprocess.PIPE, text=True) as ui:
    try:
        url = next(found.group(1) for line in ui.stderr if (found := re.search(r"dashboard (\S+)", line)))
        origin, token = url.split("/llmproxy/")[0], url.split("token=")[1]
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        asked = urllib.request.Request(f"{origin}/llmproxy/ui/app.js", headers={"authorization": f"Bearer {token}"})
        with direct.open(asked, timeout=30) as served:
            assert served.status == 200 and b"subscribe" in served.read(), "the dashboard's app.js is not served"
    finally:
        ui.terminate()
print("the installed dashboard serves its page")
"""


def main() -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llmproxy-plain-") as temp:
        venv = Path(temp) / "venv"
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
        subprocess.run([*pip, str(ROOT)], check=True)
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        run = subprocess.run([str(python), "-c", INSIDE, str(ROOT)], cwd=temp, env=environment)
    print(f"plain install checked in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
