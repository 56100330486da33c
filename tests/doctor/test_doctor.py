"""`llmproxy doctor` as a user runs it, with a CA no client trusts and then with one they do: every client
family is a real client (Python's ssl, requests, httpx, botocore, node, curl, openssl, java) probing through
llmproxy on 127.0.0.1."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import tests.mitm  # noqa: F401  (the system-install test runs the proxy in-process)
from llmproxy.doctor import families

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "json" / "doctor.schema.json").read_text())
PROBED_TOOLS = {"node": "node", "curl": "curl", "openssl": "openssl", "java": "java"}


def clean_environment(home: Path) -> dict[str, str]:
    """A shell with none of the CA or proxy variables a developer's machine may carry."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LLMPROXY_HOME": str(home / "llmproxy")}


def doctor(environ: dict[str, str], *arguments: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "llmproxy", "doctor", "--json", *arguments],
        env=environ,
        cwd=environ["HOME"],  # not the repository, whose node_modules holds coding CLIs
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    document = json.loads(done.stdout)
    jsonschema.validate(document, SCHEMA)
    return done.returncode, document


def by_name(document: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in document["findings"] if f["section"] == section}


def installed_tools() -> set[str]:
    return {family for family, tool in PROBED_TOOLS.items() if shutil.which(tool)}


def test_an_untrusted_ca_fails_every_family_with_a_fix_then_install_makes_it_trusted(tmp_path: Path) -> None:
    shell = clean_environment(tmp_path)
    code, document = doctor(shell)
    assert code == 1
    assert document["ok"] is False
    trust = by_name(document, "trust")
    expected = {"python", "requests", "httpx", "httpx2", "botocore", *installed_tools()}
    for family in expected:
        assert trust[family]["status"] == "fail", trust[family]
        assert trust[family]["fix"]
    assert "ca --install" in trust["python"]["fix"]
    assert "JAVA_TOOL_OPTIONS" in trust.get("java", {"fix": "JAVA_TOOL_OPTIONS"})["fix"]
    assert "CERTIFICATE_VERIFY_FAILED" in trust["httpx"]["evidence"]
    assert by_name(document, "proxy variables")["HTTPS_PROXY"]["status"] == "warn"

    installed = subprocess.run(
        [sys.executable, "-m", "llmproxy", "ca", "--install"], env=shell, capture_output=True, text=True, check=True
    )
    trust_file = tmp_path / "llmproxy" / "trust.sh"
    assert f"add `. {trust_file}` to your shell profile" in installed.stdout
    loaded = subprocess.run(
        ["sh", "-c", f'. "{trust_file}" && env -0'], env=shell, capture_output=True, text=True, check=True
    )
    with_trust = dict(line.split("=", 1) for line in loaded.stdout.split("\0") if "=" in line)
    code, document = doctor(with_trust)
    trust = by_name(document, "trust")
    assert {family for family, found in trust.items() if found["status"] == "ok"} >= expected | {"codex", "go", "bun"}
    assert code == 0, document  # what remains is a warning: no proxy in this shell


def test_a_command_is_checked_with_the_environment_llmproxy_gives_it(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("print('hi')\n")
    code, document = doctor(clean_environment(tmp_path), "--", sys.executable, str(script))
    assert code == 0, document
    assert document["checkedCommand"] == [sys.executable, str(script)]
    assert document["environment"]["SSL_CERT_FILE"].endswith("bundle.pem")
    trust = by_name(document, "trust")
    assert set(trust) == {"python", "requests", "httpx", "httpx2", "botocore"}  # a Python command: its families
    assert {found["status"] for found in trust.values()} == {"ok"}
    assert by_name(document, "proxy variables")["proxy"]["status"] == "ok"


def test_no_proxy_that_skips_a_provider_host_fails_it(tmp_path: Path) -> None:
    shell = {**clean_environment(tmp_path), "NO_PROXY": "localhost,.openai.com"}
    code, document = doctor(shell, "--all", "--", sys.executable, "-c", "pass")
    hosts = by_name(document, "provider hosts")
    assert code == 1
    assert set(by_name(document, "trust")) == {*families.PROBED, *families.READ}  # --all: not only Python's
    assert hosts["api.openai.com"]["status"] == "fail"
    assert "'.openai.com'" in hosts["api.openai.com"]["detail"]
    assert "NO_PROXY" in hosts["api.openai.com"]["fix"]
    assert hosts["api.anthropic.com"]["status"] == "ok"


def test_a_proxy_variable_left_from_a_stopped_llmproxy_fails(tmp_path: Path) -> None:
    with socket.socket() as held:  # bound, not listening: refused, and no other proxy can take the port meanwhile
        held.bind(("127.0.0.1", 0))
        stale = f"http://127.0.0.1:{held.getsockname()[1]}"
        code, document = doctor({**clean_environment(tmp_path), "HTTPS_PROXY": stale, "https_proxy": stale})
    proxy = by_name(document, "proxy variables")["HTTPS_PROXY"]
    assert code == 1
    assert (proxy["status"], proxy["detail"]) == (
        "fail",
        f"{stale}: nothing listens there (an llmproxy that has stopped?)",
    )


def test_the_text_report_says_each_fix_once_for_the_findings_sharing_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "llmproxy", "doctor", "--", sys.executable, "-c", "pass"],
        env={**clean_environment(tmp_path), "NO_PROXY": "api.anthropic.com,api.openai.com"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert (
        "  ✓ python: trusted — trusts SSL_CERT_FILE, else OpenSSL's default file (Python's ssl module, urllib)" in lines
    )
    assert (
        "  ✗ api.anthropic.com: NO_PROXY has 'api.anthropic.com': requests to api.anthropic.com skip llmproxy" in lines
    )
    assert lines[-1] == f"doctor: {done.stdout.count('  ✓ ')} ok, 0 warnings, 2 to fix"


def test_a_fix_is_said_once_after_the_last_finding_it_fixes(tmp_path: Path) -> None:
    """Every family untrusted, Java's fix apart from the others': the shared fix is still said once."""
    done = subprocess.run(
        [sys.executable, "-m", "llmproxy", "doctor"],
        env=clean_environment(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    fixes = [line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("    fix")]
    assert fixes, done.stdout
    assert len(fixes) == len(set(fixes)), done.stdout
    trust = done.stdout.split("trust:\n", 1)[1].split("provider hosts:", 1)[0].splitlines()
    shared = [line for line in trust if line.startswith("    fix (python, ")]
    assert len(shared) == 1, done.stdout
    assert trust[-1] == shared[0], done.stdout  # after bun, the last family it fixes


def test_hosts_go_through_llmproxy_only_when_the_environment_sends_them_there(tmp_path: Path) -> None:
    """This shell without HTTPS_PROXY (or with one nothing listens on) sends no host through llmproxy: the hosts
    say so, as the proxy variables do, and share their fix; under llmproxy they go through it."""
    code, document = doctor(clean_environment(tmp_path))
    proxy = by_name(document, "proxy variables")["HTTPS_PROXY"]
    (hosts,) = by_name(document, "provider hosts").values()
    assert (hosts["status"], hosts["fix"]) == ("warn", proxy["fix"])
    assert hosts["detail"].startswith("none goes through llmproxy: HTTPS_PROXY is not set")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        stale = f"http://127.0.0.1:{held.getsockname()[1]}"
        code, document = doctor({**clean_environment(tmp_path), "HTTPS_PROXY": stale})
    (hosts,) = by_name(document, "provider hosts").values()
    assert (code, hosts["status"]) == (1, "fail")
    assert (
        hosts["detail"] == f"none goes through llmproxy: {stale}: nothing listens there (an llmproxy that has stopped?)"
    )
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        live = f"http://127.0.0.1:{listening.getsockname()[1]}"
        code, document = doctor({**clean_environment(tmp_path), "HTTPS_PROXY": live}, "--", sys.executable)
    hosts = by_name(document, "provider hosts")
    assert {host["status"] for host in hosts.values()} == {"ok"}  # under llmproxy: llmproxy's own variables
    assert hosts["api.anthropic.com"]["detail"] == "goes through llmproxy (CONNECT and TLS for it)"


def test_the_host_checked_is_the_one_the_commands_configuration_names(tmp_path: Path) -> None:
    """A CLI pointed at a gateway (the GitHub Copilot CLI's own-key mode here) calls that host, not the
    providers': it is the one checked, and the verdict holds."""
    shell = {**clean_environment(tmp_path), "COPILOT_PROVIDER_BASE_URL": "https://models.corp.example/v1"}
    code, document = doctor(shell, "--", sys.executable, "-c", "pass")
    hosts = by_name(document, "provider hosts")
    assert list(hosts) == ["models.corp.example"]
    assert (code, hosts["models.corp.example"]["status"]) == (0, "ok")


@pytest.mark.skipif(shutil.which("update-ca-certificates") is None, reason="needs Debian's update-ca-certificates")
def test_system_install_puts_the_ca_in_the_bundle_openssl_and_python_read(tmp_path: Path) -> None:
    """The real update-ca-certificates, on folders of the test's own (the system's stay untouched)."""
    from llmproxy.ca import ensure_ca
    from llmproxy.ca_install import Anchors, apply
    from llmproxy.doctor import probes
    from llmproxy.session import Listening, mocking

    etc, local, share = tmp_path / "etc", tmp_path / "local", tmp_path / "share"
    for folder in (etc, local, share, tmp_path / "hooks"):
        folder.mkdir()
    (tmp_path / "ca-certificates.conf").write_text("")
    update = ("update-ca-certificates", "--certsconf", str(tmp_path / "ca-certificates.conf"), "--certsdir", str(share))
    update += ("--localcertsdir", str(local), "--etccertsdir", str(etc), "--hooksdir", str(tmp_path / "hooks"))
    store = Anchors("system store (Debian/Ubuntu)", local, "llmproxy.crt", update)
    ca = ensure_ca(tmp_path / "home")
    shutil.copyfile(ensure_ca(tmp_path / "another").cert_path, local / "another.crt")  # a store is never empty
    (step,) = apply([store], ca, system=True)
    assert step.did.startswith(f"added {local / 'llmproxy.crt'}")
    bundle = etc / "ca-certificates.crt"
    assert probes.holds_certificate(bundle, ca.cert_path)
    assert apply([store], ca, system=True)[0].did == f"already has the CA ({local / 'llmproxy.crt'})"

    expectations = tmp_path / "doctor.json"
    answer = {"match": {"path": probes.PATH}, "http": {"json": {"llmproxy": probes.TOKEN}}}
    expectations.write_text(json.dumps({"expectations": [answer]}))
    url = f"https://api.anthropic.com{probes.PATH}"
    reading = {"PATH": os.environ["PATH"], "SSL_CERT_FILE": str(bundle)}
    with mocking(expectations, Listening(ca_directory=tmp_path / "home")) as proxy:
        assert probes.python("python", sys.executable, proxy.url, url, reading).outcome is probes.ProbeOutcome.TRUSTED
        if shutil.which("openssl"):
            assert probes.openssl(proxy.url, url, reading).outcome is probes.ProbeOutcome.TRUSTED
        (removed,) = apply([store], ca, remove=True, system=True)
        assert removed.did.startswith("removed")
        assert not probes.holds_certificate(bundle, ca.cert_path)
        assert probes.python("python", sys.executable, proxy.url, url, reading).outcome is probes.ProbeOutcome.UNTRUSTED
