"""A DPoP client (RFC 9449) for tests, written on `cryptography`: the app's P-256 key and a
freshly signed proof per request."""

import base64
import hashlib
import json
import secrets
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DPoPKey:
    """The app's key (a Secure Enclave / Keystore key on a device) and its proofs."""

    def __init__(self):
        self.private = ec.generate_private_key(ec.SECP256R1())
        numbers = self.private.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")),
                    "y": b64(numbers.y.to_bytes(32, "big"))}

    @property
    def thumbprint(self):
        members = {name: self.jwk[name] for name in ("crv", "kty", "x", "y")}
        return b64(hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest())

    def proof(self, htm, htu, access_token=None, nonce=None, iat=None, jti=None, header=None):
        head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk} | (header or {})
        claims = {"jti": jti or secrets.token_urlsafe(16), "htm": htm, "htu": htu,
                  "iat": int(time.time()) if iat is None else iat}
        if access_token is not None:
            claims["ath"] = b64(hashlib.sha256(access_token.encode()).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        signing_input = b64(json.dumps(head).encode()) + "." + b64(json.dumps(claims).encode())
        r, s = decode_dss_signature(self.private.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
