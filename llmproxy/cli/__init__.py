"""The `llmproxy` command line.

Commands that run the proxy import mitmproxy (through the adapters, `llmproxy_addons`) only when they run:
importing it costs about two seconds, which `--help`, `--version` and the file tools should not pay.
"""

import click

from llmproxy import __version__
from llmproxy.cli.addon_path import addon_path
from llmproxy.cli.ca import ca
from llmproxy.cli.cassette import cassette
from llmproxy.cli.chaos import chaos
from llmproxy.cli.doctor import doctor
from llmproxy.cli.explain import explain
from llmproxy.cli.mock import mock
from llmproxy.cli.record import record
from llmproxy.cli.replay import replay
from llmproxy.cli.report import report
from llmproxy.cli.verify import verify


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="llmproxy")
def main() -> None:
    """Record, replay, mock, stress and understand LLM API traffic.

    llmproxy is an intercepting HTTPS proxy that speaks the wire formats of the major LLM providers.
    """


main.add_command(addon_path)
main.add_command(ca)
main.add_command(cassette)
main.add_command(chaos)
main.add_command(doctor)
main.add_command(explain)
main.add_command(mock)
main.add_command(record)
main.add_command(replay)
main.add_command(report)
main.add_command(verify)
