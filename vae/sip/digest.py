"""Digest credentials for a 401/407 challenge (RFC 3261 §22.4, RFC 8760); no I/O.

A server that wants credentials answers ``401 Unauthorized`` with
``WWW-Authenticate`` (a registrar, a UA) or ``407 Proxy Authentication
Required`` with ``Proxy-Authenticate`` (a proxy); the request is sent again
with ``Authorization`` or ``Proxy-Authorization`` carrying a hash of the
username, realm, password, nonce, method and URI (MD5, or SHA-256 where the
server asks for it; ``qop=auth`` with a client nonce and a nonce count when
offered). The password itself never travels and never leaves this module's
arguments: callers keep it out of every log and record.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from vae.sip.sipmsg import AuthChallenge

_HASHES = {"MD5": hashlib.md5, "SHA-256": hashlib.sha256}
#: Parameters sent as tokens, unquoted (RFC 2617 §3.2.2).
_TOKENS = frozenset({"algorithm", "qop", "nc"})


class DigestError(ValueError):
    """A challenge vae cannot answer (not Digest, or an unknown algorithm)."""


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str

    def __repr__(self) -> str:  # never show the password, even in a traceback
        return f"Credentials(username={self.username!r}, password='***')"


def _h(algorithm: str, text: str) -> str:
    return _HASHES[algorithm](text.encode("utf-8")).hexdigest()


def answer(header: str, method: str, uri: str, creds: Credentials, nonce_count: int = 1) -> str:
    """The ``Authorization``/``Proxy-Authorization`` value answering challenge ``header``."""
    try:
        challenge = AuthChallenge.parse(header)
    except ValueError as exc:
        raise DigestError(f"unreadable challenge {header[:80]!r}") from exc
    if challenge.scheme.lower() != "digest":
        raise DigestError(f"{challenge.scheme} authentication is not supported (only Digest)")
    params = challenge.parameters
    algorithm = params.get("algorithm", "MD5").upper()
    if algorithm not in _HASHES:
        raise DigestError(f"digest algorithm {algorithm} is not supported (MD5, SHA-256)")
    realm, nonce = params.get("realm", ""), params.get("nonce", "")
    if not nonce:
        raise DigestError("the challenge carries no nonce")
    qops = [q.strip() for q in params.get("qop", "").split(",") if q.strip()]
    ha1 = _h(algorithm, f"{creds.username}:{realm}:{creds.password}")
    ha2 = _h(algorithm, f"{method}:{uri}")
    out = {"username": creds.username, "realm": realm, "nonce": nonce, "uri": uri}
    if "auth" in qops:
        cnonce, nc = secrets.token_hex(8), f"{nonce_count:08x}"
        out["response"] = _h(algorithm, f"{ha1}:{nonce}:{nc}:{cnonce}:auth:{ha2}")
        out.update(cnonce=cnonce, nc=nc, qop="auth")
    elif qops:
        raise DigestError(f"digest qop {','.join(qops)} is not supported (only auth)")
    else:
        out["response"] = _h(algorithm, f"{ha1}:{nonce}:{ha2}")
    out["algorithm"] = algorithm
    if "opaque" in params:
        out["opaque"] = params["opaque"]
    parts = (f"{k}={v}" if k in _TOKENS else f'{k}="{_escape(v)}"' for k, v in out.items())
    return "Digest " + ", ".join(parts)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
