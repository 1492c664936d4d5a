"""The owner process: `python -m palimpsest.owner --path DIR` (started by `connect`).

    $ python -m palimpsest.owner --path ./memory --idle-timeout 600 [--no-models]

Takes the directory's owner lock (or leaves quietly, status 0, when another
owner answers), opens the memory, listens, loads the models in the background
and serves until idle for `--idle-timeout` seconds or told to stop (SIGTERM,
SIGINT). A failure to start is its last line: `error [<code>]: <message>`,
which the client that started it reports (status 3).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import files
from .server import Owner

log = logging.getLogger("palimpsest.owner")
LOCK_WAIT = 60.0  # an owner stopping hands over within this


def take_lock(directory: Path, wait: float = LOCK_WAIT) -> int | None:
    """The owner lock's fd; None when another owner answers (or holds it past `wait`)."""
    deadline = time.monotonic() + wait
    while True:
        fd = files.try_lock(directory)
        if fd is not None:
            return fd
        try:
            files.connect(directory, timeout=5.0).close()
            return None  # a live owner: nothing to do
        except OSError:
            pass
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def run(path: str | Path, *, models: bool = True, idle_timeout: float | None = None) -> int:
    """Own the memory at `path` until idle or stopped; the process's exit status."""
    from .. import __version__
    from ..errors import PalimpsestError
    from .client import is_database_url, no_owner

    if is_database_url(path):
        e = no_owner(str(path))
        print(f"error [{e.code}]: {e.message}", file=sys.stderr, flush=True)
        return 3
    directory = Path(path).absolute()
    directory.mkdir(parents=True, exist_ok=True)
    fd = take_lock(directory)
    if fd is None:
        log.info("another process owns %s", directory)
        return 0
    try:
        started = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        holder = files.Holder(os.getpid(), started, models, version=__version__)
        files.write_holder(fd, holder)
        from ..graph import quiet_module_probes

        quiet_module_probes()  # this process runs the queries itself
        try:
            mem, warm = _open(directory, models)
        except PalimpsestError as e:
            print(f"error [{e.code}]: {e.message}", file=sys.stderr, flush=True)
            return 3
        try:
            owner = Owner(mem, directory, idle_timeout=idle_timeout, models=models)
            try:
                owner.start()
            except OSError as e:  # e.g. a file system without sockets
                print(f"error [owner_unavailable]: cannot listen: {e}", file=sys.stderr, flush=True)
                return 3
            log.info("pid %d owns %s (models: %s)", os.getpid(), directory, models)
            threading.Thread(target=warm, name="owner-warm", daemon=True).start()

            def stop(signum: int, frame: Any) -> None:
                threading.Thread(target=owner.stop, name="owner-stop").start()

            signal.signal(signal.SIGTERM, stop)
            signal.signal(signal.SIGINT, stop)
            owner.wait()
        finally:
            mem.close()
        log.info("pid %d stopped owning %s", os.getpid(), directory)
        return 0
    finally:
        os.close(fd)  # last: the memory is closed before another owner may open it


def _open(directory: Path, models: bool) -> tuple[Any, Any]:
    """The memory, and a function loading its models and recall's index."""
    from .._time import utcnow
    from ..memory import Memory

    if not models:
        mem = Memory.open(directory, extractor=None, embedder=None)
        return mem, lambda: _warm_recall(mem)
    from ..extraction import SpacyExtractor
    from ..recall.embedder import named

    extractor, embedder = SpacyExtractor(), named("minilm")  # Memory.open's defaults
    mem = Memory.open(directory, extractor=extractor, embedder=embedder)

    def warm() -> None:
        t = time.perf_counter()
        embedder.embed(["warm up"])
        extractor.extract("Warm up.", occurred_at=utcnow())
        _warm_recall(mem)
        log.info("models loaded in %.1f s", time.perf_counter() - t)

    return mem, warm


def _warm_recall(mem: Any) -> None:
    try:
        for ns in mem.namespaces():
            mem.warm_recall(ns)
    except Exception:  # a warm-up is an optimisation: the first recall does it anyway
        log.exception("warming recall failed")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m palimpsest.owner", description=__doc__)
    ap.add_argument("--path", required=True)
    ap.add_argument("--idle-timeout", type=float, default=None)
    ap.add_argument("--no-models", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(process)d %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    idle = args.idle_timeout if args.idle_timeout and args.idle_timeout > 0 else None
    sys.exit(run(args.path, models=not args.no_models, idle_timeout=idle))
