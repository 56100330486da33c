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
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from llmproxy.ca import CertificateAuthority

_VALIDITY = datetime.timedelta(days=365)  # within what browsers and Apple's clients accept for a leaf (398 days)
_ALPN = ["http/1.1"]


class LeafCertificates:
    def __init__(self, ca: CertificateAuthority) -> None:
        pem = ca.key_path.read_bytes()
        key = serialization.load_pem_private_key(pem, password=None)
        assert isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey)  # what a CA signs with
        self._key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = key
        self._key_path = ca.key_path
        self._ca = x509.load_pem_x509_certificates(pem)[0]
        self._ca_pem = self._ca.public_bytes(serialization.Encoding.PEM)
        self._directory = Path(tempfile.mkdtemp(prefix="llmproxy-certs-"))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

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
        chain = self._directory / f"{hashlib.sha256(host.encode()).hexdigest()[:32]}.pem"
        chain.write_bytes(self.certificate(host).public_bytes(serialization.Encoding.PEM) + self._ca_pem)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain, self._key_path)
        context.set_alpn_protocols(_ALPN)
        return context

    def certificate(self, host: str) -> x509.Certificate:
        """The leaf certificate for `host`, signed by the CA, over the CA's public key."""
        try:
            alternative: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            alternative = x509.DNSName(host)
        now = datetime.datetime.now(datetime.UTC)
        public = self._key.public_key()
        return (
            x509.CertificateBuilder()
            .serial_number(x509.random_serial_number())
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._ca.subject)
            .not_valid_before(now - datetime.timedelta(days=2))
            .not_valid_after(now + _VALIDITY)
            .public_key(public)
            .add_extension(x509.SubjectAlternativeName([alternative]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._ca.public_key()),  # type: ignore[arg-type]
                critical=False,
            )
            .sign(self._key, hashes.SHA256())
        )
