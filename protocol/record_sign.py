"""Signed race records: what the server signs, and how anyone checks it (docs/RECORDS.md).

A record's consistency (protocol/record_verify.py) proves only that its moves are legal on the
deal its seed and salt commit to, and that the results follow: anyone can make up such a race.
What tells the server's record from a forgery is the server's signature: Ed25519 over

    SIGNED_PREFIX + the record, without its `signature` field, as RFC 8785 JSON (JCS)

and the signature travels in the record as `"signature": "ed25519:<key id>:<base64>"` (the
JSON, the text file's `[Signature "..."]` tag, the stored form). JCS makes the bytes the same
whichever form the record was read from (the text file reads back as the same record), and
reproducible with any JCS and any Ed25519 library. The key id is the first 8 bytes of
SHA-256 of the raw 32-byte public key, in hex: it names the key, it proves nothing.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

#: what every signed message starts with: a signature of a record is never one of anything else
SIGNED_PREFIX = b"solrace record v1\n"
#: the signature's algorithm, as it is written in a record and served at /api/key
ALGORITHM = "Ed25519"
SCHEME = "ed25519"
#: the record's field that holds its signature (left out of what is signed)
FIELD = "signature"
KEY_ID_BYTES = 8
SIGNATURE_BYTES = 64
KEY_BYTES = 32


class BadKey(ValueError):
    """A public or private key that cannot be read; says what was expected."""


# --- canonical form (RFC 8785) -------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """`value` as RFC 8785 JSON (JCS), UTF-8: object keys sorted, no whitespace, numbers as
    ECMAScript writes them (1.0 is `1`, 0.4 is `0.4`). ValueError for what JSON cannot hold."""
    return _jcs(value).encode("utf-8")


def _jcs(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _es_number(value)
    if isinstance(value, str):
        _check_text(value)
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise ValueError(f"an object key is not text: {k!r}")
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))  # JCS: by UTF-16 code units
        return "{" + ",".join(f"{_jcs(k)}:{_jcs(value[k])}" for k in keys) + "}"
    raise ValueError(f"{type(value).__name__} has no JSON form")


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text that is not Unicode (a lone surrogate): {exc}") from None


def _es_number(x: float) -> str:
    """ECMAScript's Number::toString of a double (what JCS requires): the shortest digits that
    read back (Python's repr has the same digits), placed as ECMAScript places them."""
    if not math.isfinite(x):
        raise ValueError(f"{x} has no JSON form")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    k, n = len(digits), exponent + len(digits)  # the value is 0.DIGITS x 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def signed_bytes(record: dict[str, Any]) -> bytes:
    """What the server signs: the prefix and the record without its signature, as JCS."""
    return SIGNED_PREFIX + canonical({k: v for k, v in record.items() if k != FIELD})


# --- keys ----------------------------------------------------------------------------------


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """A short name of a public key: the first 8 bytes of SHA-256 of its raw bytes, hex."""
    return hashlib.sha256(raw_public(key)).digest()[:KEY_ID_BYTES].hex()


def public_text(key: Ed25519PublicKey) -> str:
    """The public key as /api/key serves it: standard base64 of its raw 32 bytes."""
    return base64.b64encode(raw_public(key)).decode()


def key_info(key: Ed25519PublicKey) -> dict[str, str]:
    """The body of /api/key (and what `solrace serve --print-public-key` prints)."""
    return {
        "algorithm": ALGORITHM,
        "encoding": "base64",
        "key": public_text(key),
        "key_id": key_id(key),
        "signed": "ed25519(prefix + RFC 8785 JSON of the record without `signature`): docs/RECORDS.md",
    }


def _raw_32(text: str, what: str) -> bytes:
    """32 bytes written as 64 hex digits or as base64 (standard or url-safe, padded or not)."""
    text = text.strip()
    if len(text) == 2 * KEY_BYTES and all(c in "0123456789abcdefABCDEF" for c in text):
        return bytes.fromhex(text)
    try:
        padded = text + "=" * (-len(text) % 4)
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise BadKey(
            f"{what} is 32 bytes as 64 hex digits or as base64, not {len(text)} characters of something else"
        )
    return raw


def parse_public_key(text: str) -> Ed25519PublicKey:
    """A public key from what a person may have: the raw 32 bytes as base64 or hex, the JSON of
    /api/key, or a PEM `PUBLIC KEY`."""
    text = text.strip()
    if text.startswith("{"):
        try:
            info = json.loads(text)
        except ValueError as exc:
            raise BadKey(f"the key's JSON does not read: {exc}") from None
        if not isinstance(info, dict) or not isinstance(info.get("key"), str):
            raise BadKey('the key\'s JSON has no "key" (the JSON of /api/key has)')
        if str(info.get("algorithm", ALGORITHM)).lower() != SCHEME:
            raise BadKey(f"the key is for {info.get('algorithm')!r}, not {ALGORITHM}")
        text = info["key"]
    elif text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(text.encode())
        except ValueError as exc:
            raise BadKey(f"the PEM key does not read: {exc}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise BadKey(f"the PEM key is not an Ed25519 key ({type(key).__name__})")
        return key
    return Ed25519PublicKey.from_public_bytes(_raw_32(text, "a public key"))


def parse_private_key(text: str) -> Ed25519PrivateKey:
    """A private key from its 32-byte seed as 64 hex digits or base64 (SOLRACE_SIGNING_KEY)."""
    return Ed25519PrivateKey.from_private_bytes(_raw_32(text, "the signing key"))


# --- signing and checking ------------------------------------------------------------------


def signature_text(kid: str, sig: bytes) -> str:
    return f"{SCHEME}:{kid}:{base64.b64encode(sig).decode()}"


def sign(record: dict[str, Any], key: Ed25519PrivateKey) -> str:
    """The record's signature, as its `signature` field holds it."""
    return signature_text(key_id(key.public_key()), key.sign(signed_bytes(record)))


def signed(record: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The record with its signature (a new dict; a signature it had is replaced)."""
    out = {k: v for k, v in record.items() if k != FIELD}
    out[FIELD] = sign(out, key)
    return out


def split_signature(text: Any) -> tuple[str, bytes]:
    """(key id, 64 signature bytes) of a `signature` field; ValueError says what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"the signature is not text: {text!r}")
    scheme, _, rest = text.partition(":")
    kid, _, b64 = rest.partition(":")
    if scheme != SCHEME:
        raise ValueError(f"the signature is not {SCHEME}:KEYID:BASE64 ({scheme!r} is not {SCHEME})")
    if len(kid) != 2 * KEY_ID_BYTES or any(c not in "0123456789abcdef" for c in kid):
        raise ValueError(f"the signature's key id {kid!r} is not {2 * KEY_ID_BYTES} hex digits")
    try:
        sig = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        sig = b""
    if len(sig) != SIGNATURE_BYTES:
        raise ValueError("the signature is not 64 bytes of base64")
    return kid, sig


def pack_signature(text: str) -> bytes:
    """The stored form of a signature: the key id's 8 bytes, then the 64 signature bytes."""
    kid, sig = split_signature(text)
    return bytes.fromhex(kid) + sig


def unpack_signature(data: bytes) -> str:
    return signature_text(data[:KEY_ID_BYTES].hex(), data[KEY_ID_BYTES:])


@dataclass(frozen=True)
class SignatureCheck:
    """What a check of a record's signature found: `ok`, `unsigned`, or `bad` (with why)."""

    state: str
    message: str

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def check(record: dict[str, Any], key: Ed25519PublicKey) -> SignatureCheck:
    """Whether `key` signed exactly this record."""
    if FIELD not in record:
        return SignatureCheck(
            "unsigned",
            "the record carries no signature (a record stored before records were signed, "
            "or one the server never made)",
        )
    try:
        kid, sig = split_signature(record[FIELD])
        message = signed_bytes(record)
    except ValueError as exc:
        return SignatureCheck("bad", str(exc))
    want = key_id(key)
    if kid != want:
        return SignatureCheck(
            "bad", f"the record says it was signed by key {kid}, the key given is {want}"
        )
    try:
        key.verify(sig, message)
    except InvalidSignature:
        return SignatureCheck(
            "bad",
            f"the signature does not match the record (key {want}): the record was changed "
            "after the server signed it, or the server never signed it",
        )
    return SignatureCheck("ok", f"signed by the server's key {want}")
