import os
import stat
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from cryptography import x509

from llmproxy.ca import default_directory, ensure_ca, system_roots
from llmproxy.cli import main


def test_ca_is_created_once_with_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    ca = ensure_ca(tmp_path / "home")
    assert stat.S_IMODE(ca.key_path.stat().st_mode) == 0o600
    certificate = x509.load_pem_x509_certificate(ca.cert_path.read_bytes())
    assert certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert b"PRIVATE KEY" not in ca.cert_path.read_bytes()
    assert b"PRIVATE KEY" in ca.key_path.read_bytes()
    again = ensure_ca(tmp_path / "home")
    assert again.cert_path.read_bytes() == ca.cert_path.read_bytes()


def test_processes_starting_together_agree_on_one_ca(tmp_path: Path) -> None:
    code = "import sys; from pathlib import Path; from llmproxy.ca import ensure_ca; ensure_ca(Path(sys.argv[1]))"
    children = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)]) for _ in range(4)]
    assert [child.wait() for child in children] == [0] * 4
    key_and_cert = (tmp_path / "mitmproxy-ca.pem").read_bytes()
    assert key_and_cert.endswith((tmp_path / "mitmproxy-ca-cert.pem").read_bytes())
    assert not list(tmp_path.glob("*.tmp"))


def test_default_directory_follows_llmproxy_home_then_xdg() -> None:
    assert default_directory({"LLMPROXY_HOME": "/x/lp", "XDG_CONFIG_HOME": "/x/cfg"}) == Path("/x/lp")
    assert default_directory({"XDG_CONFIG_HOME": "/x/cfg"}) == Path("/x/cfg/llmproxy")
    assert default_directory({}) == Path.home() / ".llmproxy"


def test_bundle_holds_the_system_roots_and_the_ca(tmp_path: Path) -> None:
    ca = ensure_ca(tmp_path)
    bundle = ca.write_bundle(tmp_path / "out" / "bundle.pem")
    roots = system_roots()
    assert roots is not None
    text = bundle.read_text()
    marker = "-----BEGIN CERTIFICATE-----"
    assert text.count(marker) == roots.read_text().count(marker) + 1
    last = marker + text.rsplit(marker, 1)[1]
    assert x509.load_pem_x509_certificate(last.encode()) == x509.load_pem_x509_certificate(ca.cert_path.read_bytes())


def test_ca_command_prints_path_pem_and_writes_a_bundle(tmp_path: Path) -> None:
    runner = CliRunner(env={"LLMPROXY_HOME": str(tmp_path)})
    path = runner.invoke(main, ["ca"])
    assert path.exit_code == 0
    assert path.output == f"{tmp_path / 'mitmproxy-ca-cert.pem'}\n"
    pem = runner.invoke(main, ["ca", "--pem"])
    assert pem.output == (tmp_path / "mitmproxy-ca-cert.pem").read_text()
    bundle = runner.invoke(main, ["ca", "--bundle", str(tmp_path / "b.pem")])
    assert bundle.exit_code == 0
    assert (tmp_path / "b.pem").read_text().endswith(pem.output)


def test_ca_command_reports_an_unwritable_home(tmp_path: Path) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    os.chmod(home, 0o500)
    try:
        result = CliRunner(env={"LLMPROXY_HOME": str(home / "sub")}).invoke(main, ["ca"])
    finally:
        os.chmod(home, 0o700)
    if os.geteuid() == 0:  # root writes anywhere: nothing to report
        assert result.exit_code == 0
        return
    assert result.exit_code == 1
    assert "cannot create llmproxy's CA" in result.output


def test_install_writes_the_shell_variables_and_uninstall_removes_them(tmp_path: Path) -> None:
    runner = CliRunner(env={"LLMPROXY_HOME": str(tmp_path)})
    installed = runner.invoke(main, ["ca", "--install"])
    assert installed.exit_code == 0, installed.output
    trust = tmp_path / "trust.sh"
    assert f"llmproxy ca: shell variables: wrote {trust}: add `. {trust}` to your shell profile" in installed.output
    shown = subprocess.run(["sh", "-c", f'. "{trust}" && printf %s "$SSL_CERT_FILE"'], capture_output=True, text=True)
    assert shown.stdout == str(tmp_path / "bundle.pem")
    assert ensure_ca(tmp_path).pem() in (tmp_path / "bundle.pem").read_text()
    removed = runner.invoke(main, ["ca", "--uninstall"])
    assert removed.exit_code == 0
    assert f"llmproxy ca: shell variables: removed {trust}" in removed.output
    assert not trust.exists()


def test_install_options_that_do_not_go_together_are_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner(env={"LLMPROXY_HOME": str(tmp_path)})
    both = runner.invoke(main, ["ca", "--install", "--uninstall"])
    assert (both.exit_code, both.output) == (2, "llmproxy ca: error: --install and --uninstall: choose one\n")
    alone = runner.invoke(main, ["ca", "--system"])
    assert (alone.exit_code, alone.output) == (2, "llmproxy ca: error: --system goes with --install or --uninstall\n")
