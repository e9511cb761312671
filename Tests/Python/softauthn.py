"""A software passkey provider for tests against the JSON API: ES256 credentials, "none"
attestation, discoverable (it keeps each credential's user handle), user present and verified
on every ceremony. It turns the server's PublicKeyCredentialCreationOptionsJSON /
RequestOptionsJSON into RegistrationResponseJSON / AuthenticationResponseJSON, as
`navigator.credentials.create()/get()` followed by `toJSON()` would."""

import base64
import hashlib
import json
import os
import struct

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

FLAG_UP = 0x01
FLAG_UV = 0x04
FLAG_AT = 0x40


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _head(major, value):
    if value < 24:
        return bytes([major << 5 | value])
    for extra, size, code in ((0xFF, 1, 24), (0xFFFF, 2, 25), (0xFFFFFFFF, 4, 26)):
        if value <= extra:
            return bytes([major << 5 | code]) + value.to_bytes(size, "big")
    return bytes([major << 5 | 27]) + value.to_bytes(8, "big")


def cbor(value):
    """Deterministic CBOR for what WebAuthn needs: ints, bytes, text, lists and maps. Map
    members are written in the order given; callers give them in canonical order."""
    if isinstance(value, bool) or value is None:
        raise TypeError("not needed here")
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, str):
        encoded = value.encode()
        return _head(3, len(encoded)) + encoded
    if isinstance(value, list):
        return _head(4, len(value)) + b"".join(cbor(item) for item in value)
    if isinstance(value, dict):
        return _head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(type(value))


class Credential:
    def __init__(self, rp_id, user_handle):
        self.id = os.urandom(16)
        self.rp_id = rp_id
        self.user_handle = user_handle
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.sign_count = 0

    def cose_key(self):
        numbers = self.key.public_key().public_numbers()
        # kty EC2, alg ES256, crv P-256, x, y: in canonical (length, then bytewise) key order.
        return cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})


class SoftAuthenticator:
    def __init__(self):
        self.credentials = []

    @staticmethod
    def client_data(kind, challenge, origin):
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False},
                          separators=(",", ":")).encode()

    def create(self, options, origin):
        """A new credential for `options` (PublicKeyCredentialCreationOptionsJSON)."""
        rp_id = options["rp"].get("id") or origin.split("://", 1)[1].split(":", 1)[0]
        assert any(p["alg"] == -7 for p in options["pubKeyCredParams"]), "ES256 not offered"
        excluded = {d["id"] for d in options.get("excludeCredentials", [])}
        credential = Credential(rp_id, unb64url(options["user"]["id"]))
        assert b64url(credential.id) not in excluded
        client_data = self.client_data("webauthn.create", options["challenge"], origin)
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([FLAG_UP | FLAG_UV | FLAG_AT])
                     + struct.pack(">I", credential.sign_count) + bytes(16)
                     + struct.pack(">H", len(credential.id)) + credential.id + credential.cose_key())
        attestation = cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        self.credentials.append(credential)
        encoded_id = b64url(credential.id)
        return {
            "id": encoded_id, "rawId": encoded_id, "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                         "transports": ["internal"]},
            "clientExtensionResults": {"credProps": {"rk": True}}, "authenticatorAttachment": "platform",
        }

    def get(self, options, origin, credential=None):
        """An assertion for `options` (PublicKeyCredentialRequestOptionsJSON) by the given
        credential, or the newest one for the RP ID (a discoverable credential)."""
        rp_id = options["rpId"]
        if credential is None:
            credential = [c for c in self.credentials if c.rp_id == rp_id][-1]
        credential.sign_count += 1
        client_data = self.client_data("webauthn.get", options["challenge"], origin)
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([FLAG_UP | FLAG_UV])
                     + struct.pack(">I", credential.sign_count))
        signature = credential.key.sign(auth_data + hashlib.sha256(client_data).digest(),
                                        ec.ECDSA(hashes.SHA256()))
        encoded_id = b64url(credential.id)
        return {
            "id": encoded_id, "rawId": encoded_id, "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                         "signature": b64url(signature), "userHandle": b64url(credential.user_handle)},
            "clientExtensionResults": {}, "authenticatorAttachment": "platform",
        }
