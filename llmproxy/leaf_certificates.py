"""Certificates for the hosts the lean door answers for, issued by llmproxy's CA (`llmproxy.ca`) as mitmproxy
issues its own: one per host name (or address), made the first time a client asks for it and kept, and signed
over the CA's own key pair rather than a fresh key per host (a 2048-bit key costs ~50 ms to make; reusing the
CA's is what mitmproxy does too).

Python's `ssl` loads a certificate chain only from a file, so each chain (leaf and CA certificate: public) is
written to a private temporary directory, removed on `close`; the key is read from the CA's own file.
"""

import datetime
import hashlib
import ipaddress
import shutil
import ssl
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from llmproxy.ca import CertificateAuthority

if TYPE_CHECKING:  # imported with the CA's key, on the first tunnel: a run no client tunnels through never does
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

_VALIDITY = datetime.timedelta(days=365)  # within what browsers and Apple's clients accept for a leaf (398 days)
_ALPN = ["http/1.1"]


@dataclass(frozen=True, slots=True)
class _Signer:
    """The CA's key pair and certificate, read from its file."""

    key: "rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey"
    certificate: "x509.Certificate"
    pem: bytes  # the CA's certificate, to follow each leaf in its chain

    @classmethod
    def of(cls, pem: bytes) -> "_Signer":
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        key = serialization.load_pem_private_key(pem, password=None)
        assert isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey)  # what a CA signs with
        certificate = x509.load_pem_x509_certificates(pem)[0]
        return cls(key, certificate, certificate.public_bytes(serialization.Encoding.PEM))


class LeafCertificates:
    def __init__(self, ca: CertificateAuthority) -> None:
        """The CA's file is read now (a CA that cannot be read fails the start); its key is parsed when the first
        certificate is made."""
        self._pem = ca.key_path.read_bytes()
        self._key_path = ca.key_path
        self.ca_cert = ca.cert_path  # what trusts the certificates (mitmproxy's too: it issues from the same CA)
        self._signer: _Signer | None = None
        self._directory = Path(tempfile.mkdtemp(prefix="llmproxy-certs-"))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()
        self._signer_lock = threading.Lock()

    def context(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a certificate for `host` (a name or an address), offering
        HTTP/1.1 by ALPN."""
        host = host.lower()
        context = self._contexts.get(host)
        if context is not None:
            return context
        with self._lock:
            context = self._contexts.get(host)
            if context is None:
                context = self._contexts[host] = self._made(host)
        return context

    def close(self) -> None:
        shutil.rmtree(self._directory, ignore_errors=True)

    def _made(self, host: str) -> ssl.SSLContext:
        from cryptography.hazmat.primitives import serialization

        chain = self._directory / f"{hashlib.sha256(host.encode()).hexdigest()[:32]}.pem"
        chain.write_bytes(self.certificate(host).public_bytes(serialization.Encoding.PEM) + self.signer().pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain, self._key_path)
        context.set_alpn_protocols(_ALPN)
        return context

    def signer(self) -> _Signer:
        """The CA's key and certificate, parsed the first time a certificate is made."""
        with self._signer_lock:
            if self._signer is None:
                self._signer = _Signer.of(self._pem)
            return self._signer

    def certificate(self, host: str) -> "x509.Certificate":
        """The leaf certificate for `host`, signed by the CA, over the CA's public key."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        signer = self.signer()
        try:
            alternative: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            alternative = x509.DNSName(host)
        now = datetime.datetime.now(datetime.UTC)
        public = signer.key.public_key()
        return (
            x509.CertificateBuilder()
            .serial_number(x509.random_serial_number())
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(signer.certificate.subject)
            .not_valid_before(now - datetime.timedelta(days=2))
            .not_valid_after(now + _VALIDITY)
            .public_key(public)
            .add_extension(x509.SubjectAlternativeName([alternative]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.certificate.public_key()),  # type: ignore[arg-type]
                critical=False,
            )
            .sign(signer.key, hashes.SHA256())
        )
