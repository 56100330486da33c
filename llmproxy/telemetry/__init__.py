"""Telemetry: each metered call as an OpenTelemetry GenAI span and as metrics — over OTLP to a team's collector,
and on the control port's `/metrics` for Prometheus (docs/telemetry.md).

The pure part — what a call's attributes are (`conventions`), the instruments and their Prometheus exposition
(`metrics`), the settings (`settings`) — never imports the OpenTelemetry SDK; `otlp` does, and is imported only
when an OTLP export is asked for. Everything here observes: it runs on a thread of its own, off the request
path, and what fails is counted, never raised into the traffic.
"""
