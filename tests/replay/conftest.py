"""The recording world fixture, shared with the record tests; mitmproxy imported once with its import-time
deprecation warnings silenced (see tests/addons/conftest.py), as the in-process sessions load it."""

import warnings

from tests.record.world import world

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons  # noqa: F401

    import addons.proxy  # noqa: F401

__all__ = ["world"]
