"""API tokens: a JSON file of hashed bearer tokens, each bound to namespaces and rights.

    >>> secret, record = create_token(Path("tokens.json"), namespaces=["alice"])
    >>> verify(load_tokens(Path("tokens.json")), secret).id == record.id
    True

The file holds a JSON list of `{"id", "sha256", "namespaces", "rights", "created_at"}`;
`rights` is `read` or `write` (write includes read), and a namespace `*` means
any. Only the SHA-256 of a token is stored: the secret is shown once, when it
is created. Verification hashes the presented token and compares it with
every record in constant time. Standard library only: the `token` commands
must work without the server extra installed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from .. import _names as names
from ..errors import NotFound, ValidationError

Rights = Literal["read", "write"]
TOKEN_PREFIX = "pal_"
ANY_NAMESPACE = "*"


@dataclass(frozen=True)
class TokenRecord:
    id: str
    sha256: str
    namespaces: tuple[str, ...]
    rights: Rights = "read"
    created_at: str | None = None

    @property
    def default_namespace(self) -> str:
        first = self.namespaces[0] if self.namespaces else "default"
        return "default" if first == ANY_NAMESPACE else first

    def allows(self, namespace: str) -> bool:
        return ANY_NAMESPACE in self.namespaces or namespace in self.namespaces

    @property
    def can_write(self) -> bool:
        return self.rights == "write"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["namespaces"] = list(self.namespaces)
        return out


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def verify(records: Iterable[TokenRecord], presented: str) -> TokenRecord | None:
    """The record whose hash matches `presented`; every record is compared, in constant time."""
    digest = hash_token(presented).encode()
    found = None
    for r in records:
        if hmac.compare_digest(digest, r.sha256.encode()):
            found = r
    return found


# --- the file ----------------------------------------------------------------------------------
def _record(raw: object, n: int) -> TokenRecord:
    if not isinstance(raw, dict):
        raise ValidationError(f"tokens file: entry {n} is not an object")
    try:
        tid, digest, spaces = raw["id"], raw["sha256"], raw["namespaces"]
    except KeyError as e:
        raise ValidationError(f"tokens file: entry {n} has no {e.args[0]!r}") from None
    rights = raw.get("rights", "read")
    if not isinstance(tid, str) or not tid:
        raise ValidationError(f"tokens file: entry {n}: id must be a string")
    if not isinstance(digest, str) or len(digest) != 64:
        raise ValidationError(f"tokens file: entry {n}: sha256 must be 64 hex digits")
    if not isinstance(spaces, list) or not all(isinstance(s, str) for s in spaces):
        raise ValidationError(f"tokens file: entry {n}: namespaces must be a list of names")
    if rights not in ("read", "write"):
        raise ValidationError(f"tokens file: entry {n}: rights must be 'read' or 'write'")
    created = raw.get("created_at")
    return TokenRecord(
        id=tid,
        sha256=digest.lower(),
        namespaces=tuple(spaces),
        rights=rights,
        created_at=created if isinstance(created, str) else None,
    )


def load_tokens(path: Path) -> list[TokenRecord]:
    """Every record in the file (an absent file holds none)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ValidationError(f"tokens file {str(path)!r}: {e.strerror}") from None
    if not text.strip():
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValidationError(f"tokens file {str(path)!r}: not JSON ({e.msg})") from None
    if not isinstance(data, list):
        raise ValidationError(f"tokens file {str(path)!r}: expected a JSON list")
    return [_record(raw, n) for n, raw in enumerate(data)]


def _save(path: Path, records: Sequence[TokenRecord]) -> None:
    """Replace the file atomically, readable by its owner only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump([r.to_json() for r in records], fh, indent=2)
            fh.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_token(
    path: Path, *, namespaces: Sequence[str], rights: Rights = "write"
) -> tuple[str, TokenRecord]:
    """A new token for `namespaces`; returns the secret (shown once) and its record."""
    if not namespaces:
        raise ValidationError("a token needs at least one namespace", field="namespace")
    spaces = [s if s == ANY_NAMESPACE else names.check_namespace(s) for s in namespaces]
    if rights not in ("read", "write"):
        raise ValidationError("rights: 'read' or 'write'", field="rights")
    records = load_tokens(path)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    taken = {r.id for r in records}
    tid = "tok_" + secrets.token_hex(4)
    while tid in taken:  # pragma: no cover - 32 random bits
        tid = "tok_" + secrets.token_hex(4)
    record = TokenRecord(
        id=tid,
        sha256=hash_token(secret),
        namespaces=tuple(dict.fromkeys(spaces)),
        rights=rights,
        created_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    )
    _save(path, [*records, record])
    return secret, record


def list_tokens(path: Path) -> list[TokenRecord]:
    return load_tokens(path)


def revoke_token(path: Path, token_id: str) -> TokenRecord:
    """Remove a token by id; a running server stops accepting it on its next request."""
    records = load_tokens(path)
    keep = [r for r in records if r.id != token_id]
    if len(keep) == len(records):
        raise NotFound(f"no token {token_id[:80]!r}", id=token_id[:80])
    _save(path, keep)
    return next(r for r in records if r.id == token_id)


class TokenStore:
    """The server's view of a tokens file, re-read whenever the file changes.

    A file that disappears or cannot be read admits nobody (fail closed).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._records: list[TokenRecord] = []
        self.reload()

    def _current_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def reload(self) -> None:
        with self._lock:
            stamp = self._current_stamp()
            if stamp is not None and stamp == self._stamp:
                return
            try:
                self._records = load_tokens(self.path) if stamp is not None else []
            except ValidationError:
                self._records = []
            self._stamp = stamp

    def records(self) -> list[TokenRecord]:
        self.reload()
        return list(self._records)

    def verify(self, presented: str) -> TokenRecord | None:
        return verify(self.records(), presented)
