"""Validation and normalisation of names at the boundary.

>>> entity_key("  Mira   Okafor ")
'mira okafor'
>>> predicate_key("Resides In")
'resides_in'
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from .errors import InvalidName, TooLarge

URL_SCHEMES = ("postgresql://", "postgres://")
MAX_NAME = 512
MAX_VALUE = 65_536  # bytes of UTF-8 in a value (an object of an object_kind="value" predicate)
MAX_TEXT = 1_000_000  # characters in one episode
MAX_REASON = 2_000
_PREDICATE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_SPACE = re.compile(r"\s+")


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # Cc but tab/CR/LF


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def clean_name(value: object, *, field: str = "name") -> str:
    """A display name: a non-empty, bounded string without control characters."""
    if not isinstance(value, str):
        raise InvalidName(f"{field}: expected a string, got {type(value).__name__}", field=field)
    if len(value) <= MAX_NAME:
        cleaned = _clean_cached(value)  # bulk writes meet the same names many times
        if cleaned:
            return cleaned
    return _clean(value, field)


@lru_cache(maxsize=1 << 16)
def _clean_cached(value: str) -> str:
    """The cleaned name, or "" when it is not a valid name (the slow path explains why)."""
    try:
        return _clean(value, "name")
    except (InvalidName, TooLarge):
        return ""


def _clean(value: str, field: str) -> str:
    text = _SPACE.sub(" ", unicodedata.normalize("NFC", value)).strip()
    if not text:
        raise InvalidName(f"{field}: must not be empty", field=field)
    if len(text) > MAX_NAME:
        raise TooLarge(f"{field}: longer than {MAX_NAME} characters", field=field)
    if _has_control(text):
        raise InvalidName(f"{field}: contains control characters", field=field)
    return text


def clean_value(value: object, *, field: str = "object") -> str:
    """A value as sent (case, spacing, line breaks kept): not blank, no control characters
    but tab and line breaks, at most `MAX_VALUE` bytes of UTF-8.

    >>> clean_value("line one\n  line two")
    'line one\n  line two'
    """
    if not isinstance(value, str):
        raise InvalidName(f"{field}: expected a string, got {type(value).__name__}", field=field)
    if not value.strip():
        raise InvalidName(f"{field}: must not be empty", field=field)
    if len(value) * 4 > MAX_VALUE and len(value.encode()) > MAX_VALUE:
        raise TooLarge(f"{field}: longer than {MAX_VALUE} bytes of UTF-8", field=field)
    if _has_control(value):
        raise InvalidName(f"{field}: contains control characters", field=field)
    return value


def clean_object(value: object, object_kind: str) -> str:
    """A fact's object as its predicate keeps it: a value exactly as sent
    (`clean_value`), an entity's name cleaned (`clean_name`)."""
    if object_kind == "value":
        return clean_value(value)
    return clean_name(value, field="object")


def is_plain_value(text: str) -> bool:
    """Is the value also a clean name (so it may share the node of the name it spells)?"""
    return len(text) <= MAX_NAME and _clean_cached(text) == text


def value_key(text: str) -> str:
    """The key of a value node that only this exact text denotes (no name folds to it).

    >>> value_key("Vegetarian") != value_key("vegetarian")
    True
    """
    return "\x1d" + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def entity_key(name: str) -> str:
    """The key two names share when they name the same entity (case and space folded)."""
    if len(name) <= MAX_NAME:
        return _key_cached(name)  # a write folds each name several times (parse, resolve)
    return _key(name)


def _key(name: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()


_key_cached = lru_cache(maxsize=1 << 16)(_key)


def predicate_key(name: object, *, field: str = "predicate") -> str:
    """A predicate name in snake_case; aliases normalise the same way."""
    text = clean_name(name, field=field)
    key = re.sub(r"[\s\-]+", "_", unicodedata.normalize("NFKC", text).casefold())
    key = key.replace("'", "")
    if not _PREDICATE.match(key):
        raise InvalidName(
            f"{field}: {text[:64]!r} is not a predicate name (letters, digits, _; 64 max)",
            field=field,
        )
    return key


def alias_key(name: object, *, field: str = "alias") -> str:
    """An alias of a predicate: free words, folded (e.g. "can't stand")."""
    return entity_key(clean_name(name, field=field))


def check_namespace(value: object) -> str:
    if not isinstance(value, str) or not _NAMESPACE.match(value):
        raise InvalidName(
            "namespace: 1-64 characters of letters, digits, '_', '-', '.'", field="namespace"
        )
    return value


def check_strings(values: Iterable[object], *, field: str) -> list[str]:
    """Distinct strings, in order; anything else is refused (a lone string too)."""
    if isinstance(values, str | bytes):
        raise InvalidName(f"{field}: a list of strings, not one string", field=field)
    out: list[str] = []
    for v in dict.fromkeys(values):
        if not isinstance(v, str):
            raise InvalidName(f"{field}: expected strings, got {type(v).__name__}", field=field)
        out.append(v)
    return out


def check_text(value: object, *, field: str = "text", limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise InvalidName(f"{field}: expected a string, got {type(value).__name__}", field=field)
    if len(value) > limit:
        raise TooLarge(f"{field}: {len(value)} characters, more than {limit}", field=field)
    return value


def is_database_url(location: object) -> bool:
    """Whether a memory's location names a PostgreSQL database rather than a directory
    (the one test every layer asks: the CLI and the owner's client without loading the
    engine).

    >>> is_database_url("postgresql://palimpsest@db:5432/mem"), is_database_url("data")
    (True, False)
    """
    return isinstance(location, str) and location.startswith(URL_SCHEMES)
