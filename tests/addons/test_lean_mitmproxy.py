"""mitmproxy's addons package, made without running its `__init__` (llmproxy_addons/lean_mitmproxy.py): a proxy's start
imports none of mitmdump's other default addons, and the package still answers for everything it has."""

import subprocess
import sys


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_starting_a_proxy_imports_no_other_default_addon() -> None:
    code = (
        "import sys, llmproxy_addons.run\n"
        "print(sorted(m for m in ('flask', 'ldap3', 'mitmproxy.addons.onboarding', 'mitmproxy.addons.proxyauth')"
        " if m in sys.modules))"
    )
    assert run(code) == "[]"


def test_the_package_still_gives_its_submodules_and_its_default_addons() -> None:
    code = (
        "import llmproxy_addons.proxy\n"
        "from mitmproxy.addons import anticache\n"
        "from mitmproxy import addons\n"
        "print(anticache.__name__, len(addons.default_addons()) > 20)"
    )
    assert run(code) == "mitmproxy.addons.anticache True"
