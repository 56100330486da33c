"""llmproxy's certificate authority: made once per user, trusted by the clients llmproxy runs.

The files use mitmproxy's names (``mitmproxy-ca.pem`` = key + certificate, ``mitmproxy-ca-cert.pem`` =
certificate), so the directory is the proxy's `confdir` as it is. The key is created readable by its owner
only, and written beside its final name then renamed, so two llmproxy processes starting at once never see
half a file; the first to rename wins and the other uses its CA.
"""

import datetime
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from llmproxy.errors import LlmproxyError

KEY_AND_CERT = "mitmproxy-ca.pem"
CERT = "mitmproxy-ca-cert.pem"
_VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    directory: Path

    @property
    def cert_path(self) -> Path:
        """The certificate clients trust (public)."""
        return self.directory / CERT

    @property
    def key_path(self) -> Path:
        """Private key plus certificate: secret, mode 0600."""
        return self.directory / KEY_AND_CERT

    def pem(self) -> str:
        return self.cert_path.read_text()

    def write_bundle(self, destination: Path) -> Path:
        """Write the system's trusted roots plus this CA to `destination`. Variables such as `SSL_CERT_FILE`
        and `REQUESTS_CA_BUNDLE` replace a client's roots rather than add to them: hosts that bypass the
        proxy (`NO_PROXY`) must still verify."""
        roots = system_roots()
        text = roots.read_text() if roots else ""
        if text and not text.endswith("\n"):
            text += "\n"
        destination.parent.mkdir(parents=True, exist_ok=True)
        temporary = destination.with_name(destination.name + f".{os.getpid()}.tmp")
        temporary.write_text(text + f"# llmproxy CA ({self.cert_path})\n" + self.pem())
        temporary.replace(destination)
        return destination


def default_directory(environ: dict[str, str] | None = None) -> Path:
    """``$LLMPROXY_HOME``, else ``$XDG_CONFIG_HOME/llmproxy``, else ``~/.llmproxy``."""
    env = os.environ if environ is None else environ
    if env.get("LLMPROXY_HOME"):
        return Path(env["LLMPROXY_HOME"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "llmproxy"
    return Path.home() / ".llmproxy"


def ensure_ca(directory: Path | None = None) -> CertificateAuthority:
    """The CA in `directory` (default: `default_directory()`), created if it does not exist yet."""
    ca = CertificateAuthority(directory or default_directory())
    if ca.key_path.exists() and ca.cert_path.exists():
        return ca
    try:
        ca.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not ca.key_path.exists():
            key_pem, cert_pem = _generate()
            _write_new(ca.key_path, key_pem + cert_pem, mode=0o600)
        if not ca.cert_path.exists():
            from cryptography import x509
            from cryptography.hazmat.primitives import serialization

            certificate = x509.load_pem_x509_certificates(ca.key_path.read_bytes())[0]
            _write_new(ca.cert_path, certificate.public_bytes(serialization.Encoding.PEM), mode=0o644)
    except OSError as error:
        raise LlmproxyError(f"cannot create llmproxy's CA in {ca.directory}: {error.strerror or error}") from error
    return ca


def system_roots() -> Path | None:
    """The trusted-roots bundle the clients would otherwise use: certifi's (what requests and httpx ship),
    else OpenSSL's default file."""
    try:
        import certifi

        return Path(certifi.where())
    except ImportError:
        cafile = ssl.get_default_verify_paths().cafile
        return Path(cafile) if cafile else None


def _generate() -> tuple[bytes, bytes]:
    """A new CA's key and certificate (PEM). The certificates' library is imported only here, as in
    `llmproxy.leaf_certificates`: a run with its CA made already starts without it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "llmproxy local CA"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "llmproxy"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .serial_number(x509.random_serial_number())
        .subject_name(name)
        .issuer_name(name)
        .not_valid_before(now - datetime.timedelta(days=2))
        .not_valid_after(now + _VALIDITY)
        .public_key(key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return key_pem, certificate.public_bytes(serialization.Encoding.PEM)


def _write_new(path: Path, content: bytes, *, mode: int) -> None:
    """Create `path` with `mode` from the first byte, unless another process created it first."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)  # fails if another process won the race: keep theirs
    except FileExistsError:
        pass
    finally:
        temporary.unlink()
