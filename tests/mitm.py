"""Import mitmproxy once, with its import-time deprecation warnings silenced: mitmproxy 12.2 and its
dependencies (pyparsing, pyasn1 via ldap3) use names their newer releases deprecate. Warnings stay errors in
tests. Conftests of folders whose tests run the proxy in-process import this module."""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons  # noqa: F401

    import llmproxy_addons.proxy  # noqa: F401
