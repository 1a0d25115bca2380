"""Ed25519 certificates: the process that ran an episode vouches for what it saw.

A replay proves that a log is consistent and that its score is what it replays to;
it cannot prove that the log was written by a world that really ran, since a
consistent log of a better play *is* a genuine-looking log. Only the process that
ran the world can vouch for that, and it does so by signing a few facts with a key
that nobody else holds.

A certificate is a mapping of three strings:

* ``payload``: the facts as canonical JSON text: keys sorted, ``,`` and ``:`` as
  separators with no spaces, every character outside ASCII written as a ``\\u``
  escape, no NaN or infinity (:func:`canonical_json`);
* ``signature``: the Ed25519 signature of the payload's bytes (the ASCII text
  itself), in standard base64;
* ``key``: which key signed it, the SHA-256 (hex) of the raw 32-byte public key.

The payload is kept as text, never rebuilt from parsed JSON, so a reader checks
the exact bytes that were signed, with any Ed25519 implementation; with OpenSSL
alone::

    openssl pkeyutl -verify -pubin -inkey KEY.pub -rawin -in payload.json -sigfile signature.bin

Keys are PEM files: the private key PKCS#8, unencrypted and readable by its owner
only (mode 0600); the public key SubjectPublicKeyInfo (:func:`write_key_pair`).
The ``cryptography`` package does the arithmetic; this module names no desk.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CERTIFICATE_FIELDS = ("payload", "signature", "key")
PUBLIC_SUFFIX = ".pub"


class CertificateError(ValueError):
    """A key that cannot be used, or a certificate that does not verify; the message says which."""


def canonical_json(value: Any) -> str:
    """The one text a payload is signed as (see the module text)."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except ValueError as exc:
        raise CertificateError(f"a certified fact is not plain JSON: {exc}") from exc


def source_digest(cases: Sequence[Any]) -> str:
    """The digest of a source of cases (a split, a case file): the SHA-256 of the cases'
    own digests (``case.digest``), one per line, in order. Any edit to any case, or to
    their order, changes it."""
    text = "".join(f"{case.digest}\n" for case in cases)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _raw_public(public: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    raw: bytes = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def key_id(public: Any) -> str:
    """The SHA-256 (hex) of an Ed25519 public key's 32 raw bytes."""
    return hashlib.sha256(_raw_public(public)).hexdigest()


def write_key_pair(path: Path | str) -> tuple[Path, Path]:
    """A new Ed25519 key pair: ``path`` (private, PEM, mode 0600) and ``path.pub`` (public, PEM).

    Refuses (:class:`CertificateError`) to overwrite either file: a key that signed
    results must not be lost to a mistyped command."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private_path = Path(path)
    public_path = Path(f"{private_path}{PUBLIC_SUFFIX}")
    for existing in (private_path, public_path):
        if existing.exists():
            raise CertificateError(
                f"{existing} exists already; choose another --out (a key is never overwritten)"
            )
    private = Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise CertificateError(f"cannot write {private_path}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "wb") as out:
        out.write(private_pem)
    os.chmod(private_path, 0o600)  # whatever the umask
    public_path.write_bytes(public_pem)
    return private_path, public_path


def _read_pem(path: Path | str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CertificateError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class Signer:
    """A private Ed25519 key that signs payloads (:meth:`sign`)."""

    private: Any
    key: str  # its key id

    @classmethod
    def load(cls, path: Path | str) -> Signer:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        data = _read_pem(path, "signing key")
        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise CertificateError(
                f"{path} is not an unencrypted private key in PEM ({exc}); make one with batchgate keygen"
            ) from None
        if not isinstance(private, Ed25519PrivateKey):
            raise CertificateError(f"{path} is not an Ed25519 key; make one with batchgate keygen")
        return cls(private, key_id(private.public_key()))

    def sign(self, facts: Mapping[str, Any]) -> dict[str, str]:
        """The certificate of ``facts``: their canonical text, its signature and this key's id."""
        payload = canonical_json(dict(facts))
        signature = self.private.sign(payload.encode("ascii"))
        return {"payload": payload, "signature": base64.b64encode(signature).decode("ascii"), "key": self.key}


@dataclass(frozen=True)
class TrustedKey:
    """A public Ed25519 key that certificates are checked against (:meth:`verify`)."""

    public: Any
    key: str
    path: str = ""

    @classmethod
    def load(cls, path: Path | str) -> TrustedKey:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        data = _read_pem(path, "public key")
        try:
            public = serialization.load_pem_public_key(data)
        except (ValueError, TypeError) as exc:
            raise CertificateError(
                f"{path} is not a public key in PEM ({exc}); batchgate keygen writes KEY.pub"
            ) from None
        if not isinstance(public, Ed25519PublicKey):
            raise CertificateError(f"{path} is not an Ed25519 public key")
        return cls(public, key_id(public), str(path))

    def verify(self, certificate: object) -> dict[str, Any]:
        """The facts a certificate signed by this key vouches for; :class:`CertificateError`
        for anything else (a missing field, another key, a signature that does not verify)."""
        from cryptography.exceptions import InvalidSignature

        if not isinstance(certificate, Mapping) or not all(
            isinstance(certificate.get(name), str) for name in CERTIFICATE_FIELDS
        ):
            raise CertificateError("no certificate (a mapping of payload, signature and key, each a string)")
        if certificate["key"] != self.key:
            raise CertificateError(
                f"signed by another key ({certificate['key'][:16]}...), not {self.key[:16]}..."
            )
        try:
            signature = base64.b64decode(certificate["signature"], validate=True)
            payload = certificate["payload"].encode("ascii")
            self.public.verify(signature, payload)
        except (InvalidSignature, binascii.Error, UnicodeEncodeError, ValueError):
            raise CertificateError("the signature does not verify: the certificate was altered") from None
        facts = json.loads(payload)
        if not isinstance(facts, dict):
            raise CertificateError("the certified payload is not a JSON object")
        return facts


def check_facts(signed: Mapping[str, Any], held: Mapping[str, Any]) -> None:
    """Raise :class:`CertificateError` unless ``signed`` (a verified payload) is ``held``,
    compared as their canonical JSON reads back (a tuple is a list, as in any JSON)."""
    held_plain = json.loads(canonical_json(dict(held)))
    if dict(signed) != held_plain:
        differing = sorted(
            name for name in set(signed) | set(held_plain) if signed.get(name) != held_plain.get(name)
        )
        raise CertificateError(
            f"the certificate is genuine but signs another episode (differing: {', '.join(differing)})"
        )


__all__ = [
    "CERTIFICATE_FIELDS",
    "CertificateError",
    "Signer",
    "TrustedKey",
    "canonical_json",
    "check_facts",
    "key_id",
    "source_digest",
    "write_key_pair",
]
