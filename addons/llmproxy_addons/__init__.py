"""Thin mitmproxy addons: translate flows to core objects and apply the core's decisions (DESIGN.md §1)."""
