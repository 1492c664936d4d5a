"""What the learned precision gate looks at: one number per feature of a candidate fact.

>>> names = feature_names()
>>> "mood_question" in names, "object_cut" in names, "predicate_taste" in names
(True, True, True)

Every feature is read from what the reader already has: the parsed turn, the fact
and where its object stands in the turn (``locate``). They describe

- the clause's mood and modality before the object: a question, "can", "would",
  "if", "maybe", the future, a wish ("want", "hope"), "let's", an intention
  ("planning", "off to"), a negation;
- who the fact is about: the listener, someone else, "we";
- the turn: a reaction to a shared photo, praise;
- the object: a name or not, a gerund, a bare common noun, a plural, an idea or a
  time rather than a thing (WordNet's class of its head), long; introduced by
  "another"/"more" or "some", pointed at ("this", "that") or the listener's;
  whole or cut: the phrase or clause that says what it is left behind, cut inside
  a longer name, or the object being the sentence's subject;
- time: the fact dated, a date near it that is not its own, a time still to come;
- the predicate: a taste, an event, a thing made, an open verb or a profile
  relation; "had" as its verb; a place or a person as its object.

A small, fixed set on purpose: about 330 judged facts cannot weigh hundreds of
word features (``bench/train_gate.py`` measured the wider sets and MiniLM
vectors of the clause; neither did better on held-out conversations).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ._dates import find_time_mentions
from ._objects import _cut_short
from ._tokens import Doc, Token, _lw
from ._types import CandidateFact
from ._wordnet import noun_class

__all__ = ["feature_names", "features", "locate"]

_MODALS = {
    "can": "mood_can", "could": "mood_can", "ca": "mood_can",
    "would": "mood_would", "'d": "mood_would", "should": "mood_would", "might": "mood_would",
    "may": "mood_would", "must": "mood_would",
    "if": "mood_if", "unless": "mood_if", "whether": "mood_if",
    "maybe": "mood_maybe", "perhaps": "mood_maybe", "probably": "mood_maybe",
    "hopefully": "mood_maybe", "possibly": "mood_maybe",
    "will": "mood_future", "'ll": "mood_future", "gonna": "mood_future", "wo": "mood_future",
    "want": "mood_want", "wanna": "mood_want", "hope": "mood_want", "wish": "mood_want",
    "try": "mood_want", "need": "mood_want", "dream": "mood_want",
}  # fmt: skip
_NEGATIONS = {"not", "n't", "never", "no", "nobody", "nothing"}
# Lemmas of an intention, not a deed ("planning a trip", "aiming to"); "off to" and
# "about to" are read apart ("passionate about" is no intention).
_INTENT = {"plan", "intend", "prepare", "aim"}
_ANOTHER = {"another", "more", "other", "others", "else"}
_SOME = {"some", "few", "several", "lots", "lot", "kinds", "bunch"}
_POINTING = {"this", "that", "these", "those", "all"}
# Noun classes of what names no thing one could look up ("ideas", "goals", "tough times").
_ABSTRACT = {"cognition", "time", "motive", "attribute", "state", "feeling", "relation"}
_ADPOSITIONS = {"in", "for", "with", "from", "about", "on", "at", "to", "of"}
_PRAISE = {
    "amazing", "awesome", "cool", "great", "beautiful", "wow", "congrats", "congratulations",
    "proud", "lovely", "gorgeous", "stunning", "incredible", "fantastic", "nice", "sweet",
    "cute", "wonderful", "impressive", "inspiring", "adorable",
}  # fmt: skip
_PHOTO = re.compile(r"\[shares\b|\b(?:photo|pic|pics|picture|pictures|snap|shot)\b", re.I)
_TASTES = {"likes", "dislikes", "prefers"}
_EVENTS = {"attended", "organized"}
# The vocabulary's relations of a person's profile (lives_in, works_at, ...) and the
# life predicates the rules read; any other predicate is an open verb's lemma.
_VOCABULARY = {
    "lives_in", "works_at", "job_title", "studies_at", "born_in", "birthday", "age",
    "nationality", "spouse", "partner", "sibling", "parent", "child", "friend", "pet",
    "owns", "speaks", "allergic_to", "applied_to", "plays_for", "coaches",
    "position_held", "political_party", "activity", "visited", "plays", "works_on", "read",
    "researched", "plans", "volunteers_at", "won", "enrolled_in", "member_of", "uses",
    "learn", "received", "mentors", "watched", "met",
}  # fmt: skip

_NAMES: tuple[str, ...] = (
    "mood_question", "mood_can", "mood_would", "mood_if", "mood_maybe", "mood_future",
    "mood_want", "mood_lets", "intent", "negated",
    "subject_listener", "subject_other", "sentence_we", "sentence_you",
    "turn_photo", "sentence_praise",
    "object_name", "object_gerund", "object_single_noun", "object_plural", "object_abstract",
    "object_long", "object_after_another", "object_after_some", "object_pointed",
    "object_after_your", "object_loses_phrase", "object_loses_clause", "object_cut",
    "object_is_subject",
    "dated", "time_elsewhere", "future_time",
    "predicate_taste", "predicate_event", "predicate_made", "open_predicate",
    "profile_predicate", "verb_have", "object_place", "object_person",
)  # fmt: skip
_INDEX = {name: i for i, name in enumerate(_NAMES)}


def feature_names() -> tuple[str, ...]:
    """The features in the order the weights are stored."""
    return _NAMES


def locate(doc: Doc, phrase: str) -> list[Token] | None:
    """The tokens of ``phrase`` in ``doc`` (first occurrence, case and spacing folded),
    else of its last word; None when neither is there."""
    want = [w for w in re.findall(r"\w+|[^\w\s]", phrase.casefold()) if w]
    if not want:
        return None
    toks = [t for t in doc if not t.is_space]
    words = [str(t.lower_) for t in toks]
    joined = "".join(want)
    for i in range(len(words)):  # spaCy splits words its own way ("CS:GO", "sci-fi")
        if not want[0].startswith(words[i]):
            continue
        j, acc = i, ""
        while j < len(words) and len(acc) < len(joined):
            acc += words[j]
            j += 1
        if acc == joined:
            return toks[i:j]
    for t in toks:
        if str(t.lower_) == want[-1]:
            return [t]
    return None


def features(
    doc: Doc,
    fact: CandidateFact,
    span: Sequence[Token] | None,
    *,
    speaker: str,
    addressee: str | None,
    reference: datetime | None = None,
) -> list[float]:
    """The feature vector of one candidate fact read from ``doc`` (see ``feature_names``);
    ``reference`` is when the text was said (for a time still to come)."""
    x = [0.0] * len(_NAMES)

    def on(name: str, value: float = 1.0) -> None:
        x[_INDEX[name]] = value

    sent = list(span[0].sent) if span else list(next(iter(doc.sents), doc))
    start = span[0].i if span else sent[-1].i + 1
    before = [t for t in sent if t.i < start]
    sent_words = [_lw(t) for t in sent]
    if "?" in "".join(t.text for t in sent):
        on("mood_question")
    for i, t in enumerate(before):
        w, lemma = _lw(t), str(t.lemma_).lower()
        if w in ("off", "about") and i + 1 < len(before) and _lw(before[i + 1]) == "to":
            on("intent")  # "I'm off to bake", "about to leave"
        mood = _MODALS.get(w) or _MODALS.get(lemma)
        if mood is not None:
            on(mood)
        if w in _NEGATIONS:
            on("negated")
        if lemma in _INTENT and t.pos_ == "VERB":
            on("intent")
        if w in ("we", "us", "our"):
            on("sentence_we")
    if "let" in sent_words[:2] or "let's" in sent_words[:2]:
        on("mood_lets")
    if addressee and fact.subject == addressee and fact.subject != speaker:
        on("subject_listener")
    elif fact.subject != speaker:
        on("subject_other")
    if any(w in ("you", "your", "yours", "ur") for w in sent_words):
        on("sentence_you")
    if _PHOTO.search(doc.text):
        on("turn_photo")
    if any(w in _PRAISE for w in sent_words):
        on("sentence_praise")
    _object_features(on, span, fact)
    if fact.valid_from is not None or fact.valid_to is not None:
        on("dated")
    elif _time_near(doc, sent):
        on("time_elsewhere")  # "Last night was amazing! We celebrated ...": a date missed
    if reference is not None and _time_ahead(sent, reference):
        on("future_time")
    if fact.predicate in _TASTES:
        on("predicate_taste")
    elif fact.predicate in _EVENTS:
        on("predicate_event")
    elif fact.predicate == "made":
        on("predicate_made")
    elif fact.predicate in _VOCABULARY:
        on("profile_predicate")
    else:
        on("open_predicate")
    verb = _governing_verb(span) if span else None
    if verb is not None and str(verb.lemma_).lower() == "have":
        on("verb_have")  # "had a great talk": a time had, not an event attended
    return x


def _object_features(
    on: Callable[..., None], span: Sequence[Token] | None, fact: CandidateFact
) -> None:
    words = fact.object.split()
    if len(words) > 5:
        on("object_long")
    head = words[-1].casefold() if words else ""
    if span:
        doc, last = span[0].doc, span[-1]
        head = str(last.lemma_).lower()
        if any(t.pos_ == "PROPN" or t.ent_type_ for t in span):
            on("object_name")
        if span[0].tag_ == "VBG":
            on("object_gerund")
        if last.tag_ in ("NNS", "NNPS"):
            on("object_plural")
        if len(span) == 1 and last.pos_ == "NOUN":
            on("object_single_noun")
        if _cut_short(list(span)):
            on("object_cut")
        if any(t.dep_ in ("nsubj", "nsubjpass", "csubj") for t in span):
            on("object_is_subject")  # "Winning first place is amazing"
        prev = [_lw(t) for t in doc[max(0, span[0].i - 3) : span[0].i]]
        first = _lw(span[0])
        if set(prev[-2:]) & _ANOTHER or first in _ANOTHER:
            on("object_after_another")
        if set(prev) & _SOME or first in _SOME:
            on("object_after_some")
        if set(prev[-2:]) & _POINTING or first in _POINTING:
            on("object_pointed")
        if set(prev[-1:]) & {"your", "ur"}:
            on("object_after_your")
        after = doc[last.i + 1 : last.i + 3]
        if (
            len(after) == 2
            and _lw(after[0]) in _ADPOSITIONS
            and after[1].pos_ in ("DET", "NOUN", "PROPN", "ADJ", "PRON", "NUM")
        ):
            on("object_loses_phrase")  # "gains" of "gains in strength and endurance"
        if after and (after[0].tag_ in ("WDT", "WP", "WRB") or after[0].tag_ == "VBG"):
            on("object_loses_clause")  # "teaching people" of "... how to make this"
        if any(t.ent_type_ in ("GPE", "LOC", "FAC") for t in span):
            on("object_place")
        if any(t.ent_type_ == "PERSON" for t in span):
            on("object_person")
    cls = noun_class(head) if head else None
    if cls in _ABSTRACT:
        on("object_abstract")
    elif cls == "location":
        on("object_place")
    elif cls == "person":
        on("object_person")


def _governing_verb(span: Sequence[Token]) -> Token | None:
    """The verb the object hangs from ("had" of "had a great talk")."""
    head = span[-1]
    for _ in range(4):
        if head.pos_ in ("VERB", "AUX") and head not in span:
            return head
        if head.head is head:
            return None
        head = head.head
    return None


_SOME_DAY = datetime(2000, 6, 15, tzinfo=UTC)


def _time_near(doc: Doc, sent: list[Token]) -> bool:
    """A time that names a day, week, month or year in the fact's sentence or the one
    before it (vague ones, "lately", do not count)."""
    if not sent:
        return False
    first = sent[0].i
    before = next((s for s in doc.sents if s.end == first), None)
    start = before.start_char if before is not None else sent[0].idx
    text = doc.text[start : sent[-1].idx + len(sent[-1].text)]
    return any(m.resolve(_SOME_DAY) is not None for m in find_time_mentions(text))


def _time_ahead(sent: list[Token], reference: datetime) -> bool:
    """A time in the sentence that lies after it was said ("later this month")."""
    if not sent:
        return False
    text = sent[0].doc.text[sent[0].idx : sent[-1].idx + len(sent[-1].text)]
    for m in find_time_mentions(text):
        w = m.resolve(reference)
        if w is not None and w.valid_from is not None and w.valid_from > reference:
            return True
    return False
