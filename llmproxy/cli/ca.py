"""`llmproxy ca`: where llmproxy's CA certificate is, and making clients outside llmproxy trust it."""

from pathlib import Path

import click

from llmproxy.ca import ensure_ca
from llmproxy.cli.reporting import reported
from llmproxy.errors import UsageError
from llmproxy.options import option


@click.command()
@option("--pem", is_flag=True, help="Print the certificate itself (PEM) instead of its path.")
@option(
    "--bundle",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the system roots plus llmproxy's CA to this file, for variables such as SSL_CERT_FILE.",
)
@option("--install", is_flag=True, help="Make clients run outside llmproxy trust the CA (what doctor advises).")
@option("--uninstall", is_flag=True, help="Undo --install (with --system: the system's stores).")
@option("--system", is_flag=True, help="With --install/--uninstall: the system's trust stores (needs root).")
@option("--debug", is_flag=True, help="Show the traceback of an error, not only its one line.")
@reported("ca")
def ca(pem: bool, bundle: Path | None, install: bool, uninstall: bool, system: bool, debug: bool) -> int:
    """Print the path of llmproxy's CA certificate, creating the CA on first use.

    The CA lives in $LLMPROXY_HOME, else $XDG_CONFIG_HOME/llmproxy, else ~/.llmproxy; its private key is
    readable by its owner only. Commands run under llmproxy (`llmproxy record -- CMD`) trust it without
    anything installed. For clients started elsewhere, --install writes trust.sh beside the CA (the CA
    variables, for `. trust.sh` in a shell profile) and a Java trust store, and on macOS trusts it in the
    login keychain; --install --system adds it to the system's store and the JDK's cacerts.
    """
    from llmproxy import ca_install

    if install and uninstall:
        raise UsageError("--install and --uninstall: choose one")
    if system and not (install or uninstall):
        raise UsageError("--system goes with --install or --uninstall")
    authority = ensure_ca()
    if install or uninstall:
        stores = ca_install.system_stores() if system else ca_install.user_stores(authority)
        for step in ca_install.apply(stores, authority, remove=uninstall, system=system):
            click.echo(f"llmproxy ca: {step}")
        return 0
    if bundle is not None:
        authority.write_bundle(bundle)
    click.echo(authority.pem() if pem else str(authority.cert_path), nl=not pem)
    return 0
