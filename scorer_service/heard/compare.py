"""Said versus heard over a session: one alignment, cut back into the speaker's turns.

Why one alignment for the whole session: a listener's recogniser cuts speech
where it likes — two of the caller's turns in one transcript, one turn in
two — so pairing reports turn by turn would count its segmentation as
errors. Instead every word the speaker said (its turns in order) is aligned
once against every word the listener reported hearing (in order); each heard
word then belongs to the turn of the said word it was aligned with (an
inserted word to the turn before it). Per turn the result holds both texts in
their own words with each difference marked, and the critical mismatches
(:mod:`vae.scorer_service.heard.critical`) found between them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from vae.scorer_service.heard.align import EQUAL, INS, Alignment, align
from vae.scorer_service.heard.critical import Item, contains, items
from vae.scorer_service.heard.normalise import Token, tokens

#: At most this many turns are kept in a score's detail.
MAX_TURNS = 200


@dataclass(frozen=True)
class Line:
    """One transcript line: a turn the speaker said, or a report of what the listener heard."""

    t_s: float
    text: str


@dataclass(frozen=True)
class Mismatch:
    turn: int
    kind: str
    said: str
    heard: str
    said_value: str
    heard_value: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "kind": self.kind, "said": self.said, "heard": self.heard,
            "said_value": self.said_value, "heard_value": self.heard_value,
        }  # fmt: skip


@dataclass
class TurnResult:
    t_s: float
    said: str
    heard: str
    #: ``[text, op]`` pieces covering each text in order; op ``=`` (as heard), sub, del, ins.
    said_marks: list[list[str]] = field(default_factory=list)
    heard_marks: list[list[str]] = field(default_factory=list)
    words: int = 0
    errors: int = 0


@dataclass
class Comparison:
    alignment: Alignment
    turns: list[TurnResult]
    mismatches: list[Mismatch]

    @property
    def wer(self) -> float:
        return self.alignment.wer


def _marks(text: str, toks: list[Token], ops: dict[int, str], lo: int, hi: int) -> list[list[str]]:
    """``text[lo:hi]`` as pieces: each token with its op, the text between plain (``=``)."""
    pieces: list[tuple[str, str]] = []
    at = lo
    for i, t in enumerate(toks):
        if t.start > at:
            pieces.append((text[at : t.start], EQUAL))
        pieces.append((text[t.start : t.end], ops.get(i, EQUAL)))
        at = max(at, t.end)
    if hi > at:
        pieces.append((text[at:hi], EQUAL))
    out: list[list[str]] = []
    for piece, op in pieces:
        if out and out[-1][1] == op == EQUAL:
            out[-1][0] += piece
        else:
            out.append([piece, op])
    return out


def _span(text: str, toks: list[Token], item: Item) -> str:
    return text[toks[item.first].start : toks[item.last - 1].end]


def _present(item: Item, others: list[Item], other_tokens: list[Token]) -> bool:
    if item.kind == "name":
        return any(t.text == item.value for t in other_tokens)
    return contains(others, item)


def _pairable(a: Item, b: Item) -> bool:
    return a.kind == b.kind or {a.kind, b.kind} == {"number", "date"}


def _mismatches(
    turn: int, said: str, s_toks: list[Token], heard: str, h_toks: list[Token]
) -> list[Mismatch]:
    s_items, h_items = items(s_toks, said), items(h_toks, heard)
    missing = [i for i in s_items if not _present(i, h_items, h_toks)]
    extra = [i for i in h_items if i.kind != "name" and not _present(i, s_items, s_toks)]
    out: list[Mismatch] = []
    for m in missing:
        partner = next((e for e in extra if _pairable(m, e)), None)
        if partner is not None:
            extra.remove(partner)
        out.append(
            Mismatch(
                turn, m.kind, _span(said, s_toks, m),
                "" if partner is None else _span(heard, h_toks, partner),
                m.value, "" if partner is None else partner.value,
            )
        )  # fmt: skip
    for e in extra:
        out.append(Mismatch(turn, e.kind, "", _span(heard, h_toks, e), "", e.value))
    return out


def compare(said: list[Line], heard: list[Line]) -> Comparison:
    """Align what was said (turn by turn) with everything heard, and cut it back into turns."""
    said_tokens = [tokens(line.text) for line in said]
    ref: list[tuple[int, int]] = [
        (t, i) for t, toks in enumerate(said_tokens) for i in range(len(toks))
    ]
    heard_text = " ".join(line.text.strip() for line in heard if line.text.strip())
    h_toks = tokens(heard_text)
    alignment = align([said_tokens[t][i].text for t, i in ref], [tok.text for tok in h_toks])
    said_ops: dict[int, dict[int, str]] = defaultdict(dict)
    heard_of: dict[int, list[int]] = defaultdict(list)
    heard_ops: dict[int, str] = {}
    errors: dict[int, int] = defaultdict(int)
    turn = 0
    for step in alignment.steps:
        if step.ref is not None:
            turn, i = ref[step.ref]
            said_ops[turn][i] = step.op
        if step.hyp is not None:
            heard_of[turn].append(step.hyp)
            heard_ops[step.hyp] = step.op
        if step.op != EQUAL:
            errors[turn] += 1
    results: list[TurnResult] = []
    found: list[Mismatch] = []
    # A turn's heard text runs to where the next turn's starts: its punctuation kept.
    starts = [h_toks[heard_of[t][0]].start for t in range(len(said)) if heard_of.get(t)]
    for t, line in enumerate(said):
        mine = heard_of.get(t, [])
        toks = [h_toks[i] for i in mine]
        if toks:
            lo = toks[0].start
            nxt = next((s for s in starts if s > lo), len(heard_text))
            hi = max(toks[-1].end, len(heard_text[:nxt].rstrip()))
            ops = {k: heard_ops[i] for k, i in enumerate(mine)}
            heard_marks = _marks(heard_text, toks, ops, lo, hi)
            heard_span = heard_text[lo:hi]
        else:
            heard_marks, heard_span = [], ""
        shift = toks[0].start if toks else 0
        local = [Token(x.text, x.start - shift, x.end - shift, x.kind) for x in toks]
        found += _mismatches(t, line.text, said_tokens[t], heard_span, local)
        results.append(
            TurnResult(
                t_s=line.t_s,
                said=line.text,
                heard=heard_span,
                said_marks=_marks(line.text, said_tokens[t], said_ops[t], 0, len(line.text)),
                heard_marks=heard_marks,
                words=len(said_tokens[t]),
                errors=errors[t],
            )
        )
    if not said and h_toks:  # heard something when nothing was said: all insertions
        ops = dict.fromkeys(range(len(h_toks)), INS)
        results.append(
            TurnResult(
                0.0,
                "",
                heard_text,
                [],
                _marks(heard_text, h_toks, ops, 0, len(heard_text)),
                0,
                len(h_toks),
            )
        )
        found += _mismatches(0, "", [], heard_text, h_toks)
    return Comparison(alignment, results, found)


def mismatch_text(m: dict[str, Any], listener: str = "agent", speaker: str = "caller") -> str:
    """``the agent heard "X" where the caller said "Y"`` (or did not hear it, or heard extra)."""
    said, got = str(m.get("said") or ""), str(m.get("heard") or "")
    if said and got:
        return f'the {listener} heard "{got}" where the {speaker} said "{said}"'
    if said:
        return f'the {listener} did not hear "{said}" that the {speaker} said'
    return f'the {listener} heard "{got}", which the {speaker} never said'
