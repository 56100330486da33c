"""Intercept (docs/chaos.md): chaos, quotas and a cost budget on every request, decided in the pure core.

`engine.Intercept` decides per request from profiles (`profile.py`) that come from the chaos file and the
command line (`rules.py`), the runtime control API (`hosts.py`, `control.py`) and a request's own
`x-llmproxy-chaos` header; counters live in a `store` (in memory, or Redis); `decision.py` holds what it
decides, `shaping.py` what it does to answers let through, `aftermath.py` what the client did next.
"""
