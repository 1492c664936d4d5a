"""The dashboard's files: one HTML shell, plain ES modules, CSS and vendored assets.

    >>> (STATIC / "index.html").is_file()
    True

Served by `palimpsest.api.ui` at `/ui/` (the pages) and `/ui/static/` (the
files); every page reads the memory through the `/v1/` API alone, with the
caller's bearer token when the server has a tokens file. Nothing is built: the
modules run as written. Third-party files live under `static/vendor/` with their
licences (see `static/vendor/VENDOR.md`).
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
