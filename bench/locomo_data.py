"""LoCoMo for the benches: the conversations, the questions, the metric, the abstention set.

    >>> convs, questions, skipped = load_locomo()          # /work/shared/data/locomo
    >>> evidence_share(["D1:3", "D2:8"], ["D2:8"])          # the authors' metric
    1.0

What bench/locomo.py, peers.py, floor_decision.py, mixed_load.py and
locomo_baselines.py share. LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is
10 two-person conversations with dated sessions and questions whose evidence is
a list of turn ids (``dia_id``); the development split is DEV, the holdout
split HOLDOUT (/work/shared/data/README.md: tune on DEV only).

The metric is the LoCoMo authors' retrieval metric: per question, the share of
its evidence turns among the turns retrieved in the top k (`evidence_share`),
averaged over questions. Session dates are read by the engine's own LoCoMo
importer (`palimpsest.transfer`'s `parse_date`). Evidence ids are cleaned the
obvious way ("D8:6; D9:17" is two ids, "D:11:26" is "D11:26", "D30:05" is
"D30:5"); ids naming no turn are dropped and a question left with no evidence is
skipped (the count is returned). Shared images are rendered by their BLIP
caption ("[shares a photo of …]"), as LoCoMo's own prompts do.

The abstention set (bench/data/abstention_locomo.jsonl, `make_abstention`) holds
hand-written questions about things each conversation never mentions, for the
false-memory rate.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from palimpsest.transfer._locomo import parse_date

DATA = Path(os.environ.get("LOCOMO_PATH", "/work/shared/data/locomo/locomo10.json"))
ABSTENTION = Path(__file__).resolve().parent / "data" / "abstention_locomo.jsonl"
DEV = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
HOLDOUT = ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 25)


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    position: int
    occurred_at: datetime


@dataclass
class Question:
    conv_id: str
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    conv_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    last_date: datetime
    index: dict[str, int] = field(default_factory=dict)


def _clean_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;\s,]+", item):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", piece.strip())
            if m:
                did = f"D{int(m.group(1))}:{int(m.group(2))}"
                if did in known and did not in out:
                    out.append(did)
    return out


def load_locomo(path: Path = DATA) -> tuple[list[Conversation], list[Question], int]:
    """Conversations, their questions, and how many questions had no usable evidence."""
    raw = json.loads(path.read_text())
    convs: list[Conversation] = []
    questions: list[Question] = []
    skipped = 0
    for sample in raw:
        c = sample["conversation"]
        sessions = sorted(
            (int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k) and c[k]),
        )
        turns: list[Turn] = []
        for s in sessions:
            when = parse_date(c[f"session_{s}_date_time"])
            for pos, t in enumerate(c[f"session_{s}"]):
                turns.append(
                    Turn(
                        dia_id=t["dia_id"],
                        speaker=t["speaker"],
                        text=t["text"],
                        caption=t.get("blip_caption", "") or "",
                        session=s,
                        position=pos,
                        occurred_at=when,
                    )
                )
        conv = Conversation(
            conv_id=sample["sample_id"],
            speakers=(c["speaker_a"], c["speaker_b"]),
            turns=turns,
            last_date=max(t.occurred_at for t in turns),
        )
        conv.index = {t.dia_id: i for i, t in enumerate(turns)}
        convs.append(conv)
        known = set(conv.index)
        for q in sample["qa"]:
            ev = _clean_evidence(q.get("evidence", []), known)
            if not ev:
                skipped += 1
                continue
            questions.append(Question(conv.conv_id, q["question"], int(q["category"]), ev))
    return convs, questions, skipped


def turn_text(t: Turn, *, speaker: bool = True, caption: bool = True, date: bool = False) -> str:
    """What a channel indexes for a turn, e.g. 'Caroline: text [shares a photo of …]'."""
    body = t.text
    if caption and t.caption:
        # LoCoMo's own prompts render shared images by their BLIP caption.
        body = f"{body} [shares {t.caption}]"
    if date:
        body = f"({t.occurred_at:%-d %B %Y}) {body}"
    return f"{t.speaker}: {body}" if speaker else body


def evidence_share(found: Collection[Hashable], evidence: Sequence[Hashable]) -> float:
    """The share of a question's evidence turns among the turns `found` (the top k); 0
    for a question without evidence (a never-mentioned one).

    >>> evidence_share({"D1:2", "D1:3"}, ["D1:3", "D4:1"])
    0.5
    """
    return sum(1 for e in evidence if e in found) / max(1, len(evidence))


# --------------------------------------------------------------------------- abstention

# Hand-written questions about things to check are never mentioned. Each has
# regular expressions (matched case-insensitively at a word start against every
# turn and image caption) that must all be absent from a conversation before the
# question is asked of it; make_abstention() checks that and load_abstention()
# checks it again.
ABSTENTION_POOL: list[tuple[str, list[str]]] = [
    ("What is {p}'s favourite football team?", ["football", "soccer"]),
    ("Which submarine did {p} tour?", ["submarine"]),
    ("How much cryptocurrency does {p} own?", ["crypto", "bitcoin", "ethereum"]),
    ("When did {p} start learning the saxophone?", ["saxophone", r"sax\b"]),
    ("What chess opening does {p} prefer?", ["chess"]),
    ("Who prepares {p}'s tax return?", [r"tax\b", "taxes"]),
    ("What did {p}'s dentist say at the last check-up?", ["dentist", "dental"]),
    ("What brand of motorbike does {p} ride?", ["motorbike", "motorcycle"]),
    ("Which opera did {p} see at the opera house?", ["opera"]),
    ("What is the name of {p}'s pet iguana?", ["iguana", "lizard", "reptile"]),
    ("How many marathons has {p} run in Antarctica?", ["antarctic"]),
    ("What did {p} think of the volcano tour in Iceland?", ["volcano", "iceland"]),
    ("Which stocks did {p} sell during the market crash?", [r"stocks?\b", "stock market", "crash"]),
    ("What surfing competition did {p} enter?", ["surf"]),
    ("When did {p} get a tattoo, and what does it show?", ["tattoo"]),
    ("What knitting pattern is {p} working on?", ["knit", "crochet"]),
    ("Which violin concerto is {p} practising?", ["violin", "concerto"]),
    ("How did {p} do in the poker tournament?", ["poker"]),
    ("What is {p}'s blood type?", ["blood type"]),
    ("Which beekeeping supplies did {p} buy for the hives?", [r"bees?\b", "beekeep", "hive"]),
    ("What did {p} name the sailboat?", ["sailboat", "sailing", "yacht"]),
    ("Where did {p} go skydiving?", ["skydiv", "parachut"]),
    ("What did {p} learn at the sushi-making class?", ["sushi"]),
    ("Which mountain did {p} climb in Nepal?", ["nepal", "everest", "himalaya"]),
    ("What does {p} grow in the greenhouse?", ["greenhouse"]),
    ("How long has {p} been practising karate?", ["karate", "martial art", "judo", "taekwondo"]),
    ("Which telescope did {p} buy to watch the stars?", ["telescope", "astronom"]),
    ("What was {p}'s score at the bowling alley?", ["bowling"]),
    ("Who won when {p} played golf last weekend?", ["golf"]),
    ("What did {p} do with the inheritance from the great-aunt?", ["inherit", r"aunts?\b"]),
    ("Which wine region did {p} visit for the wine tasting?", ["wine", "vineyard"]),
    ("How many languages does {p} speak, and is Mandarin one of them?", ["mandarin", "chinese"]),
    ("What is {p}'s opinion on nuclear power plants?", ["nuclear"]),
    ("Which podcast does {p} host?", ["podcast"]),
    ("When did {p} break an arm while skiing?", [r"ski(s|ing|ed|er)?\b", r"broke \w+ arm"]),
    ("What was {p}'s role in the community theatre musical?", ["musical", "theater", "theatre"]),
    ("What model of drone does {p} fly?", ["drone"]),
    ("Why did {p} sell the vintage piano?", ["piano"]),
    ("Which aquarium fish does {p} keep in the reef tank?", ["aquarium", "reef", "fish tank"]),
    ("What is {p}'s favourite cheese from France?", ["cheese", "france", "french", "paris"]),
    ("Which ballet did {p} perform in?", ["ballet"]),
    ("What did {p} buy at the antique auction?", ["auction", "antique"]),
    ("Which astronaut did {p} meet at the space centre?", ["astronaut", "nasa", "space cent"]),
    ("How often does {p} go scuba diving?", ["scuba", "diving", "snorkel"]),
    ("What did {p} build with the 3D printer?", ["3d print", "printer"]),
    ("What is {p}'s handicap at the golf club?", ["golf", "handicap"]),
    ("Which rugby club did {p} join?", ["rugby"]),
    ("What did {p} think of the hot-air balloon ride?", ["balloon"]),
    ("What was in the time capsule {p} buried?", ["capsule"]),
    ("How many chickens does {p} keep in the backyard?", ["chicken", r"hens?\b", "coop"]),
    ("Which court case did {p} serve on the jury for?", ["jury", "court case", "courtroom"]),
    ("What did {p} carve at the woodworking course?", ["woodwork", "carv", "whittl"]),
    ("Which tennis racket does {p} use?", ["tennis", "racket"]),
    ("What did {p}'s cardiologist recommend?", ["cardiolog", "heart surgeon", "heart attack"]),
    ("Which airline does {p} fly with on work trips?", ["airline", "flight attendant"]),
    ("What is the name of {p}'s lawyer?", ["lawyer", "attorney", "solicitor"]),
    ("How much did {p} pay for the electric scooter?", ["scooter"]),
    ("Which glacier did {p} hike across?", ["glacier"]),
    ("What grade did {p} get in the calculus exam?", ["calculus"]),
    ("What is {p}'s favourite brand of whisky?", ["whisk(e)?y", "bourbon", "scotch"]),
    ("Which horse did {p} bet on at the derby?", ["derby", "racehorse", "horse rac"]),
    ("What is the name of {p}'s parrot?", ["parrot", "parakeet", "budgie"]),
    ("Which fencing club does {p} train at?", ["fencing", "sabre", "epee"]),
    ("What did {p}'s plumber fix in the bathroom?", ["plumb"]),
    ("How many goals did {p} score in the water polo final?", ["polo"]),
    ("What is {p}'s cholesterol level?", ["cholesterol"]),
    ("Which escape room did {p} solve?", ["escape room"]),
    ("What did {p} name the sourdough starter?", ["sourdough"]),
    ("Which cryptic crossword does {p} solve every morning?", ["crossword"]),
    ("What was {p}'s time in the triathlon?", ["triathlon", "ironman"]),
    ("Which monastery did {p} stay at in Tibet?", ["monaster", "tibet"]),
    ("What did {p} win at the county fair pie contest?", [r"pies?\b", "county fair"]),
    ("Which kayak did {p} buy for the rapids?", ["kayak", "rapids", "canoe"]),
    ("What is {p}'s favourite flavour of bubble tea?", ["bubble tea", "boba"]),
    ("Which archery competition did {p} enter?", ["archery", r"bows?\b", "arrow"]),
    ("How many stamps are in {p}'s stamp collection?", ["stamp"]),
    ("What did {p}'s accountant say about the mortgage?", ["accountant", "mortgage"]),
    ("Which planetarium show did {p} watch?", ["planetarium"]),
    ("What did {p} see through the microscope in the lab?", ["microscope"]),
    ("Which origami animal did {p} fold?", ["origami"]),
    ("Who taught {p} to play the bagpipes?", ["bagpipe"]),
    ("What is {p}'s personal best in the pole vault?", ["pole vault", "athletics"]),
    ("Which typewriter did {p} restore?", ["typewriter"]),
    ("What did {p} cook on the camping stove during the blizzard?", ["blizzard"]),
    ("Where did {p} go paragliding?", ["paraglid", "hang glid"]),
]  # fmt: skip
ABSTENTION_PER_CONV = 20


def _absent(conv: Conversation, patterns: Sequence[str]) -> bool:
    corpus = "\n".join(f"{t.text} {t.caption}" for t in conv.turns)
    return not any(re.search(r"\b" + p, corpus, re.IGNORECASE) for p in patterns)


def make_abstention(convs: Sequence[Conversation], path: Path = ABSTENTION) -> int:
    """Write the abstention set: per conversation, pool questions whose terms are absent.

    Development conversations draw from the even-numbered pool entries and
    holdout ones from the odd-numbered, so the floor chosen on development
    questions has never seen a holdout question's topic.
    """
    rows: list[dict[str, Any]] = []
    for ci, conv in enumerate(convs):
        split = "dev" if conv.conv_id in DEV else "holdout"
        pool = ABSTENTION_POOL[0 if split == "dev" else 1 :: 2]
        picked = 0
        # Rotate the pool per conversation so sets differ between conversations.
        for j in range(len(pool)):
            template, patterns = pool[(ci * 3 + j) % len(pool)]
            if not _absent(conv, patterns):
                continue
            person = conv.speakers[picked % 2]
            rows.append(
                {
                    "conv_id": conv.conv_id,
                    "split": split,
                    "question": template.format(p=person),
                    "about": person,
                    "absent_terms": patterns,
                }
            )
            picked += 1
            if picked == ABSTENTION_PER_CONV:
                break
        if picked < ABSTENTION_PER_CONV:
            raise ValueError(f"only {picked} abstention questions fit {conv.conv_id}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def load_abstention(convs: Sequence[Conversation], path: Path = ABSTENTION) -> list[dict[str, Any]]:
    by_id = {c.conv_id: c for c in convs}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in rows:
        if not _absent(by_id[r["conv_id"]], r["absent_terms"]):
            raise ValueError(f"abstention question is answerable: {r}")
    return rows
