import warnings

# mitmproxy 12.2 and its dependencies (pyparsing, pyasn1 via ldap3) use names their newer releases
# deprecate, at import time. Import it once with those warnings silenced; warnings stay errors in tests.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons  # noqa: F401

    import addons.proxy  # noqa: F401
