"""TLS certificates and SuperNode keys for a first real federated run (``paperkit ferret-certs``).

Writes a self-signed CA, a server certificate signed by it (SAN: 127.0.0.1, localhost and the given
host names/addresses) with its key, and optionally N SuperNode key pairs for Flower's node
authentication (EC P-384, OpenSSH format, as ``flower-supernode --auth-supernode-private-key`` reads
them) plus ``node_public_keys.csv``, the list of public keys the SuperLink admits. Good for trying the
setup; a deployment would use certificates from its own CA. Private keys are written mode 0600.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from pathlib import Path

from paperkit.core.errors import UsageError

CA_CERT, CA_KEY, SERVER_CERT, SERVER_KEY = "ca.crt", "ca.key", "server.crt", "server.key"
NODE_KEYS_CSV = "node_public_keys.csv"


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _san(hosts: list[str]):
    from cryptography import x509

    names, seen = [], set()
    for h in ["127.0.0.1", "localhost", *hosts]:
        h = h.strip()
        if not h or h in seen:
            continue
        seen.add(h)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            if any(c in h for c in " /:@,") or h.startswith("-"):
                raise UsageError(f"--host '{h}' is neither an IP address nor a DNS name") from None
            names.append(x509.DNSName(h))
    return names


def write_certificates(out: str | os.PathLike, hosts: list[str] = (), nodes: int = 0, days: int = 365) -> dict:
    """Write ca.crt/ca.key, server.crt/server.key and ``nodes`` SuperNode key pairs into ``out``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if days < 1:
        raise UsageError(f"--days {days} is out of range; expected at least 1")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    san = _san(list(hosts))
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    until = now + dt.timedelta(days=days)

    def pem_key(key) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paperkit ferret CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paperkit ferret-server")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(until)
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    _write(out / CA_KEY, pem_key(ca_key), private=True)
    _write(out / CA_CERT, ca.public_bytes(pem))
    _write(out / SERVER_KEY, pem_key(key), private=True)
    _write(out / SERVER_CERT, cert.public_bytes(pem))
    written = {"ca": str(out / CA_CERT), "server_cert": str(out / SERVER_CERT), "server_key": str(out / SERVER_KEY),
               "san": [str(n.value) for n in san], "node_keys": []}
    if nodes:
        publics = []
        for i in range(nodes):
            nk = ec.generate_private_key(ec.SECP384R1())
            priv = nk.private_bytes(pem, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
            pub = nk.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
            _write(out / f"node-{i}.key", priv, private=True)
            _write(out / f"node-{i}.pub", pub + b"\n")
            publics.append(pub.decode())
            written["node_keys"].append(str(out / f"node-{i}.key"))
        _write(out / NODE_KEYS_CSV, ("\n".join(publics) + "\n").encode())
        written["node_public_keys"] = str(out / NODE_KEYS_CSV)
    return written


def read_public_keys(path: str | os.PathLike) -> list[bytes]:
    """SuperNode public keys (PEM, as Flower registers them) from a file with one OpenSSH EC key per line
    (or per CSV cell), such as ``node_public_keys.csv``."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_ssh_public_key

    from paperkit.core.errors import InputError

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    keys = []
    for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for cell in (c.strip() for c in line.split(",")):
            if not cell:
                continue
            try:
                key = load_ssh_public_key(cell.encode())
            except (ValueError, TypeError) as e:
                raise InputError(f"{path}: line {n} is not an OpenSSH public key ({e})") from None
            if not isinstance(key, ec.EllipticCurvePublicKey):
                raise InputError(f"{path}: line {n} is not an EC public key (Flower node auth needs NIST EC keys)")
            keys.append(key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))  # as Flower stores them
    if not keys:
        raise InputError(f"{path}: no public keys")
    return keys
