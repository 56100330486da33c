"""`llmproxy ca --install`: make clients that run outside llmproxy trust its CA — what `llmproxy doctor`
recommends. Under `llmproxy record/replay/mock -- CMD` nothing needs installing: the command gets the CA
variables (`environment.py`).

User scope (no root): `trust.sh` beside the CA, exporting the CA variables for a shell to load; a Java trust
store (the JDK's roots plus the CA) when `keytool` is there; on macOS, the login keychain. System scope
(`--system`, as root): the distribution's anchors folder and its update command (Debian/Ubuntu, Fedora/RHEL),
the JDK's `cacerts`, on macOS the System keychain. Each step says what it did; `--uninstall` undoes them.
"""

import os
import platform
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llmproxy.ca import CertificateAuthority
from llmproxy.environment import ca_environment, export_lines
from llmproxy.errors import LlmproxyError

ALIAS = "llmproxy"
JAVA_PASSWORD = "changeit"  # the JDK's own default: a trust store holds no secret
ENV_FILE = "trust.sh"
JAVA_STORE = "java-truststore.p12"


@dataclass(frozen=True, slots=True)
class Step:
    store: str
    did: str

    def __str__(self) -> str:
        return f"{self.store}: {self.did}"


@dataclass(frozen=True, slots=True)
class Anchors:
    """A distribution's folder of extra trusted CAs and the command that rebuilds its bundle from it."""

    name: str
    directory: Path
    filename: str
    update: tuple[str, ...]

    def install(self, ca: CertificateAuthority) -> Step:
        target = self.directory / self.filename
        if target.exists() and target.read_bytes() == ca.cert_path.read_bytes():
            return Step(self.name, f"already has the CA ({target})")
        self.directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ca.cert_path, target)
        target.chmod(0o644)
        _run(self.update)
        return Step(self.name, f"added {target}, ran {Path(self.update[0]).name}")

    def uninstall(self, ca: CertificateAuthority) -> Step:
        target = self.directory / self.filename
        if not target.exists():
            return Step(self.name, "did not have the CA")
        target.unlink()
        _run([*self.update, "--fresh"] if Path(self.update[0]).name == "update-ca-certificates" else self.update)
        return Step(self.name, f"removed {target}, ran {Path(self.update[0]).name}")


@dataclass(frozen=True, slots=True)
class JavaStore:
    """A Java key store: the JDK's own `cacerts` (system scope), or a copy of it with the CA added that
    JAVA_TOOL_OPTIONS can point at (user scope)."""

    name: str
    keytool: str
    keystore: Path | None  # None: the JDK's cacerts (`keytool -cacerts`)
    copy_from: Path | None = None  # user scope: the cacerts the new store starts from

    def _where(self) -> list[str]:
        return ["-cacerts"] if self.keystore is None else ["-keystore", str(self.keystore)]

    def install(self, ca: CertificateAuthority) -> Step:
        if self.keystore is not None and self.copy_from is not None and not self.keystore.exists():
            source = ["-srckeystore", str(self.copy_from), "-srcstorepass", JAVA_PASSWORD]
            destination = ["-destkeystore", str(self.keystore), "-deststoretype", "PKCS12"]
            _run([self.keytool, "-importkeystore", "-noprompt", *source, *destination, "-deststorepass", JAVA_PASSWORD])
        listed = subprocess.run(
            [self.keytool, "-list", *self._where(), "-storepass", JAVA_PASSWORD, "-alias", ALIAS],
            capture_output=True,
            check=False,
        )
        if listed.returncode == 0:
            return Step(self.name, "already has the CA")
        certificate = ["-alias", ALIAS, "-file", str(ca.cert_path)]
        _run([self.keytool, "-importcert", "-noprompt", *self._where(), "-storepass", JAVA_PASSWORD, *certificate])
        return Step(self.name, f"added the CA{f' ({self.keystore})' if self.keystore else ''}")

    def uninstall(self, ca: CertificateAuthority) -> Step:
        if self.keystore is not None:
            existed = self.keystore.exists()
            self.keystore.unlink(missing_ok=True)
            return Step(self.name, f"removed {self.keystore}" if existed else "was not there")
        done = subprocess.run(
            [self.keytool, "-delete", "-cacerts", "-storepass", JAVA_PASSWORD, "-alias", ALIAS],
            capture_output=True,
            check=False,
        )
        return Step(self.name, "removed the CA" if done.returncode == 0 else "did not have the CA")


@dataclass(frozen=True, slots=True)
class EnvFile:
    """`trust.sh`: the CA variables as `export` lines, for `. ~/.llmproxy/trust.sh` in a shell profile."""

    path: Path
    java_store: Path | None

    def install(self, ca: CertificateAuthority) -> Step:
        bundle = ca.write_bundle(ca.directory / "bundle.pem")
        variables = ca_environment(ca.cert_path, bundle)
        if self.java_store is not None:
            variables["JAVA_TOOL_OPTIONS"] = (
                f"-Djavax.net.ssl.trustStore={self.java_store} -Djavax.net.ssl.trustStorePassword={JAVA_PASSWORD}"
            )
        header = f"# written by `llmproxy ca --install`; load it in a shell with: . {self.path}\n"
        self.path.write_text(header + export_lines(variables))
        return Step("shell variables", f"wrote {self.path}: add `. {self.path}` to your shell profile")

    def uninstall(self, ca: CertificateAuthority) -> Step:
        existed = self.path.exists()
        self.path.unlink(missing_ok=True)
        return Step("shell variables", f"removed {self.path}" if existed else "were not written")


@dataclass(frozen=True, slots=True)
class Keychain:
    """macOS: the login keychain (user scope) or the System keychain (system scope)."""

    name: str
    keychain: str
    system: bool

    def install(self, ca: CertificateAuthority) -> Step:
        admin = ["-d"] if self.system else []
        _run(["security", "add-trusted-cert", *admin, "-r", "trustRoot", "-k", self.keychain, str(ca.cert_path)])
        return Step(self.name, "added the CA as a trusted root")

    def uninstall(self, ca: CertificateAuthority) -> Step:
        _run(["security", "remove-trusted-cert", *(["-d"] if self.system else []), str(ca.cert_path)])
        return Step(self.name, "removed the CA's trust")


type Store = Anchors | JavaStore | EnvFile | Keychain


def user_stores(ca: CertificateAuthority) -> list[Store]:
    stores: list[Store] = []
    java = _jdk()
    java_store = ca.directory / JAVA_STORE if java is not None else None
    if java is not None and java_store is not None:
        keytool, cacerts = java
        stores.append(JavaStore("Java trust store (user)", keytool, java_store, cacerts))
    stores.append(EnvFile(ca.directory / ENV_FILE, java_store))
    if platform.system() == "Darwin":
        login = str(Path.home() / "Library" / "Keychains" / "login.keychain-db")
        stores.append(Keychain("login keychain", login, system=False))
    return stores


def system_stores() -> list[Store]:
    stores: list[Store] = []
    if platform.system() == "Darwin":
        stores.append(Keychain("System keychain", "/Library/Keychains/System.keychain", system=True))
    elif update := shutil.which("update-ca-certificates"):
        anchors = Path("/usr/local/share/ca-certificates")
        stores.append(Anchors("system store (Debian/Ubuntu)", anchors, "llmproxy.crt", (update,)))
    elif update := shutil.which("update-ca-trust"):
        anchors = Path("/etc/pki/ca-trust/source/anchors")
        stores.append(Anchors("system store (Fedora/RHEL)", anchors, "llmproxy.pem", (update, "extract")))
    if (java := _jdk()) is not None:
        stores.append(JavaStore("JDK cacerts", java[0], None))
    if not stores:
        raise LlmproxyError("no system trust store llmproxy knows here (update-ca-certificates, update-ca-trust)")
    return stores


def apply(
    stores: Sequence[Store], ca: CertificateAuthority, *, remove: bool = False, system: bool = False
) -> list[Step]:
    """Install (or `remove`) the CA in each store; the steps taken. System scope needs root."""
    if system and hasattr(os, "geteuid") and os.geteuid() != 0:
        verb = "--uninstall" if remove else "--install"
        raise LlmproxyError(f"the system's trust stores need root: sudo llmproxy ca {verb} --system")
    return [store.uninstall(ca) if remove else store.install(ca) for store in stores]


def _jdk() -> tuple[str, Path] | None:
    """`keytool` and the JDK's cacerts, when a JDK is on PATH."""
    keytool, java = shutil.which("keytool"), shutil.which("java")
    if keytool is None or java is None:
        return None
    cacerts = Path(java).resolve().parent.parent / "lib" / "security" / "cacerts"
    return (keytool, cacerts) if cacerts.exists() else None


def _run(command: Sequence[str]) -> None:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, check=False)
    except OSError as error:
        raise LlmproxyError(f"cannot run {command[0]}: {error.strerror or error}") from error
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise LlmproxyError(f"{Path(command[0]).name} failed (exit {done.returncode}): {said[-1] if said else ''}")
