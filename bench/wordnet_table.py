"""Derive the package's WordNet table from Debian's WordNet 3.0 (issue 31).

    apt-get install wordnet-base          # WordNet 3.0 database files, Princeton licence
    python bench/wordnet_table.py         # writes palimpsest/extraction/data/wordnet.tsv.gz

One line per noun and verb lemma: ``pos<TAB>lemma<TAB>class``, the class being the
lexicographer file (``noun.person`` -> ``person``, ``verb.motion`` -> ``motion``) of
the lemma's first sense, which WordNet orders by frequency in its tagged corpus.
Only single words are kept (a phrase is classed by its head). The table is committed as data
so that ``pip install`` needs no WordNet; this script is how it was made, and the
licence it carries is copied beside it (``wordnet-LICENSE``).
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "palimpsest" / "extraction" / "data"
# the lexicographer files in their numbered order (WordNet's lexnames(5WN))
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
# single words only: the table classifies a phrase by its head word (about 290 KB)
_WORD = re.compile(r"^[a-z][a-z'-]*$")


def first_classes(wn: Path, pos: str) -> dict[str, str]:
    """lemma -> class of its first sense, for one part of speech ("noun" or "verb")."""
    lexfile: dict[str, str] = {}
    for line in (wn / f"data.{pos}").open(encoding="latin-1"):
        if line.startswith(" "):
            continue
        offset, lexnum = line.split(" ", 2)[:2]
        lexfile[offset] = LEXNAMES[int(lexnum)].split(".", 1)[1]
    out: dict[str, str] = {}
    for line in (wn / f"index.{pos}").open(encoding="latin-1"):
        if line.startswith(" "):
            continue
        parts = line.split()
        lemma = parts[0]
        if not _WORD.match(lemma):
            continue
        synset_cnt, ptr_cnt = int(parts[2]), int(parts[3])
        offsets = parts[4 + ptr_cnt + 2 :]
        assert len(offsets) == synset_cnt, line
        out[lemma] = lexfile[offsets[0]]
    return out


def licence(copyright_file: Path) -> str:
    """Princeton's WordNet 3.0 licence, as Debian's copyright file carries it."""
    text = copyright_file.read_text()
    block = text.split("License: WordNet3.0", 1)[1].split("\n\n", 1)[0]
    body = "\n".join(line[1:] if line.startswith(" ") else line for line in block.splitlines())
    body = body.replace("\n.\n", "\n\n").strip()
    return (
        "palimpsest/extraction/data/wordnet.tsv.gz is derived from WordNet 3.0\n"
        "(Debian package wordnet-base; https://wordnet.princeton.edu/) by\n"
        "bench/wordnet_table.py. WordNet's licence:\n\n" + body + "\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--copyright", default="/usr/share/doc/wordnet-base/copyright")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = [
        f"{pos[0]}\t{lemma}\t{cls}\n"
        for pos in ("noun", "verb")
        for lemma, cls in sorted(first_classes(args.wordnet, pos).items())
    ]
    # mtime=0: the same input gives the same bytes
    with gzip.GzipFile(args.out / "wordnet.tsv.gz", "wb", compresslevel=9, mtime=0) as f:
        f.write("".join(rows).encode())
    (args.out / "wordnet-LICENSE").write_text(licence(Path(args.copyright)))
    print(f"{len(rows)} lemmas -> {args.out / 'wordnet.tsv.gz'}")


if __name__ == "__main__":
    main()
