"""Thin mitmproxy addons: translate flows to core objects and apply the core's decisions
(docs/architecture.md#one-chain-three-doors)."""
