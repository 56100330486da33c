import subprocess
from pathlib import Path

from llmproxy.environment import base_url_environment, child_environment, export_lines, proxy_environment


def test_proxy_environment_covers_every_client_family() -> None:
    variables = proxy_environment("http://127.0.0.1:9", Path("/c/ca.pem"), Path("/c/bundle.pem"))
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        assert variables[name] == "http://127.0.0.1:9"
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "AWS_CA_BUNDLE"):
        assert variables[name] == "/c/bundle.pem"  # these replace the roots: the combined bundle
    for name in ("NODE_EXTRA_CA_CERTS", "CODEX_CA_CERTIFICATE"):
        assert variables[name] == "/c/ca.pem"  # these add to the roots: the CA alone
    assert not {"NO_PROXY", "no_proxy"} & variables.keys()


def test_child_environment_keeps_the_users_no_proxy() -> None:
    env = child_environment({"NO_PROXY": "internal.example", "PATH": "/bin"}, {"HTTPS_PROXY": "http://p"})
    assert env == {"NO_PROXY": "internal.example", "PATH": "/bin", "HTTPS_PROXY": "http://p"}


def test_export_lines_survive_a_real_shell(tmp_path: Path) -> None:
    odd = tmp_path / "it's a dir" / "ca $HOME.pem"
    variables = proxy_environment("http://127.0.0.1:9", odd, odd)
    script = export_lines(variables) + 'printf %s "$NODE_EXTRA_CA_CERTS"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout == str(odd)


def test_base_url_variables_only_when_asked() -> None:
    plain = base_url_environment("http://127.0.0.1:7", ["http://127.0.0.1:8", "http://127.0.0.1:9"], False)
    assert plain == {
        "LLMPROXY_BASE_URL": "http://127.0.0.1:7",
        "LLMPROXY_REVERSE_URL_1": "http://127.0.0.1:8",
        "LLMPROXY_REVERSE_URL_2": "http://127.0.0.1:9",
    }
    asked = base_url_environment("http://127.0.0.1:7", [], True)
    assert asked["ANTHROPIC_BASE_URL"] == asked["GOOGLE_GEMINI_BASE_URL"] == asked["CODE_ASSIST_ENDPOINT"]
    assert asked["OPENAI_BASE_URL"] == "http://127.0.0.1:7/v1"  # the OpenAI SDKs expect the version in it
