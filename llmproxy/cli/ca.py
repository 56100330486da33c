"""`llmproxy ca`: where llmproxy's CA certificate is, for clients that must trust it."""

from pathlib import Path

import click

from llmproxy.ca import ensure_ca
from llmproxy.errors import LlmproxyError


@click.command()
@click.option("--pem", is_flag=True, help="Print the certificate itself (PEM) instead of its path.")
@click.option(
    "--bundle",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the system roots plus llmproxy's CA to this file, for variables such as SSL_CERT_FILE.",
)
def ca(pem: bool, bundle: Path | None) -> None:
    """Print the path of llmproxy's CA certificate, creating the CA on first use.

    The CA lives in $LLMPROXY_HOME, else $XDG_CONFIG_HOME/llmproxy, else ~/.llmproxy; its private key is
    readable by its owner only.
    """
    try:
        authority = ensure_ca()
        if bundle is not None:
            authority.write_bundle(bundle)
    except (LlmproxyError, OSError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(authority.pem() if pem else str(authority.cert_path), nl=not pem)
