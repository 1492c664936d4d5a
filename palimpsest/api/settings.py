"""Server settings from the environment (only `api/` and `cli.py` read it).

PALIMPSEST_PATH       the memory directory (default palimpsest-data), or a postgresql:// URL
PALIMPSEST_TOKENS     a tokens file; without one, loopback clients only
PALIMPSEST_NAMESPACE  the namespace used when a request names none (default "default")
PALIMPSEST_MAX_BODY   the largest request body in bytes (default 2 MiB)
PALIMPSEST_CONSOLIDATE_AT  daily consolidation time, HH:MM (default 03:00; "off": none)
PALIMPSEST_TIMEZONE   the timezone of that time of day (IANA name, default UTC)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ValidationError

DEFAULT_PATH = "palimpsest-data"
DEFAULT_MAX_BODY = 2 * 1024 * 1024
DEFAULT_CONSOLIDATE_AT = "03:00"


@dataclass(frozen=True)
class ServerSettings:
    path: str = DEFAULT_PATH
    tokens_file: str | None = None
    namespace: str = "default"
    max_body_bytes: int = DEFAULT_MAX_BODY
    consolidate_at: str | None = DEFAULT_CONSOLIDATE_AT  # None: no scheduled consolidation
    timezone: str = "UTC"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServerSettings:
        env = os.environ if env is None else env
        raw_max = env.get("PALIMPSEST_MAX_BODY", str(DEFAULT_MAX_BODY))
        if not raw_max.isdigit() or int(raw_max) < 1:
            raise ValidationError("PALIMPSEST_MAX_BODY: a positive number of bytes")
        at = env.get("PALIMPSEST_CONSOLIDATE_AT") or DEFAULT_CONSOLIDATE_AT
        return cls(
            path=env.get("PALIMPSEST_PATH") or DEFAULT_PATH,
            tokens_file=env.get("PALIMPSEST_TOKENS") or None,
            namespace=env.get("PALIMPSEST_NAMESPACE") or "default",
            max_body_bytes=int(raw_max),
            consolidate_at=None if at.strip().lower() == "off" else at,
            timezone=env.get("PALIMPSEST_TIMEZONE") or "UTC",
        )
