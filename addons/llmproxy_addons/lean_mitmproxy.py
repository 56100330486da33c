"""The parts of mitmproxy a proxy is built from, imported without running `mitmproxy.addons`'s `__init__`,
which imports all ~30 of mitmdump's default addons (flask for the onboarding app, ldap3 for proxy
authentication…): a sixth of a second at every start, for addons never loaded here. Import them from here,
before anything imports `mitmproxy.master` (which imports an addon itself).

The package module is made from its spec without being run. A name asked of it that is one of its
submodules imports that submodule (as `from mitmproxy.addons import termlog` expects); any other name
(`default_addons`, as mitmproxy's own tools and test helpers use) runs the package whole, once.
"""

import importlib
import importlib.util
import sys
from types import ModuleType


def _package_unrun() -> None:
    if "mitmproxy.addons" in sys.modules:
        return
    spec = importlib.util.find_spec("mitmproxy.addons")
    assert spec is not None
    assert spec.loader is not None
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)

    def lookup(name: str) -> object:
        if not name.startswith("__") and importlib.util.find_spec(f"mitmproxy.addons.{name}") is not None:
            submodule: ModuleType = importlib.import_module(f"mitmproxy.addons.{name}")
            return submodule
        del package.__getattr__  # the package's own `from mitmproxy.addons import …` must not come back here
        loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = lookup  # type: ignore[method-assign]
    sys.modules["mitmproxy.addons"] = package


_package_unrun()

from mitmproxy import http, options  # noqa: E402
from mitmproxy.addons import core, disable_h2c, next_layer, proxyserver, tlsconfig, update_alt_svc  # noqa: E402
from mitmproxy.master import Master  # noqa: E402


def without_debug_typechecks() -> None:
    """Build requests and responses without type-checking every field: in a debug run (Python without -O,
    as every `llmproxy` and `mitmdump` run is), mitmproxy checks each field of every request and response
    it builds against its annotation — a dozen checks, about 4% of a replayed request's CPU — to catch its
    own addons' mistakes. Called by llmproxy's own proxy (never when its addons run inside someone else's
    mitmproxy), whose flows are built by mitmproxy's HTTP layer and by the door from checked values."""
    http.MessageData.__post_init__ = _unchecked  # type: ignore[method-assign]


def _unchecked(self: object) -> None:
    return None


__all__ = ["Master", "core", "disable_h2c", "next_layer", "options", "proxyserver", "tlsconfig", "update_alt_svc"]
