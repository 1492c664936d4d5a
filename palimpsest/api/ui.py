"""The dashboard at `/ui/` and the API docs at `/docs` and `/redoc`, served from the package.

    GET /ui/                      the dashboard (one HTML shell; the modules route)
    GET /ui/entity/Mira?known_at=2024-09-15T00:00:00Z   a bookmarkable page
    GET /ui/static/app.js         its files; vendored assets under /ui/static/vendor/
    GET /docs, /redoc             Swagger UI and Redoc, from the same vendored files

Nothing is fetched from another host: the HTML names only files served here, and
the Content-Security-Policy (`browser.BrowserGuard`) forbids anything else. The
pages hold no data; they read `/v1/` with the caller's token, like any client.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from ..ui import STATIC

# the first segment of every page the dashboard routes (palimpsest/ui/static/app.js)
PAGES = frozenset({"", "entity", "graph", "recall", "review", "episode"})
VENDOR = "/ui/static/vendor"

_DOCS = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Palimpsest API: Swagger UI</title>
<link rel="icon" href="{VENDOR}/swagger-ui/favicon-32x32.png">
<link rel="stylesheet" href="{VENDOR}/swagger-ui/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{VENDOR}/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/ui/static/docs.js"></script>
</body>
</html>
"""

_REDOC = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Palimpsest API: Redoc</title>
<link rel="icon" href="{VENDOR}/swagger-ui/favicon-32x32.png">
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="{VENDOR}/redoc/redoc.standalone.js"></script>
</body>
</html>
"""

router = APIRouter(include_in_schema=False)


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/ui/")


@router.get("/ui")
def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/")


@router.api_route("/ui/{page:path}", methods=["GET", "HEAD"], response_model=None)
def ui_page(page: str) -> Response:
    """The shell for every dashboard URL, so a page can be bookmarked and reloaded."""
    if page.split("/", 1)[0] not in PAGES:
        raise HTTPException(404, f"no dashboard page {page[:80]!r}")
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/docs")
def docs() -> HTMLResponse:
    return HTMLResponse(_DOCS)


@router.get("/redoc")
def redoc() -> HTMLResponse:
    return HTMLResponse(_REDOC)


def install(app: FastAPI) -> None:
    """Mount the files, then the pages (so `/ui/static/...` reaches the files)."""
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.include_router(router)
