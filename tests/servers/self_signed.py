"""A self-signed certificate for 127.0.0.1, its own CA (``BasicConstraints(ca=True)``),
for the TLS peers of the suites: the SDK 1.x WebSocket server (ws_sdk1_server.py, run in
its own venv), the HTTPS SDK server (tests/shells/test_http_custom.py) and the pool's TLS
server (tests/shells/test_http_pool.py). Standard library and ``cryptography`` only."""

from __future__ import annotations

import datetime
import ipaddress
import os


def self_signed(directory: str | os.PathLike[str]) -> tuple[str, str]:
    """Write ``key.pem`` and ``cert.pem`` (valid for a day) in ``directory``:
    (certfile, keyfile). The certificate appears whole or not at all (written aside,
    then renamed), for a client polling for it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile = os.path.join(directory, "cert.pem")
    keyfile = os.path.join(directory, "key.pem")
    with open(keyfile, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    with open(certfile + ".tmp", "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    os.replace(certfile + ".tmp", certfile)
    return certfile, keyfile
