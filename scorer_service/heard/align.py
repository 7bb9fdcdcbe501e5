"""Word alignment and word error rate: the Levenshtein path between two token lists.

Why a path and not only a distance: the report marks each difference in
place, and a critical mismatch is reported in the words around it, so every
reference word must know what it was heard as. Costs are the usual ones
(substitution, deletion and insertion 1; a match 0); among equal-cost paths
the backtrace prefers a substitution, then a deletion, so "twentieth" heard
as "twenty first" reads as one substitution and one insertion.

``wer = (substitutions + deletions + insertions) / reference words``; with no
reference words it is 0 when nothing was heard either, else 1 per inserted
word (capped at 1 by :func:`score_from`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

EQUAL, SUB, DEL, INS = "=", "sub", "del", "ins"


@dataclass(frozen=True)
class Step:
    """One step of the path: ``ref``/``hyp`` are indices into the two lists (None: absent)."""

    op: str
    ref: int | None
    hyp: int | None


@dataclass(frozen=True)
class Alignment:
    steps: list[Step]
    ref_words: int

    @property
    def substitutions(self) -> int:
        return sum(1 for s in self.steps if s.op == SUB)

    @property
    def deletions(self) -> int:
        return sum(1 for s in self.steps if s.op == DEL)

    @property
    def insertions(self) -> int:
        return sum(1 for s in self.steps if s.op == INS)

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float:
        if self.ref_words == 0:
            return float(self.insertions > 0)
        return self.errors / self.ref_words


def align(ref: Sequence[str], hyp: Sequence[str]) -> Alignment:
    """The minimal-edit path turning ``ref`` into ``hyp``."""
    n, m = len(ref), len(hyp)
    # cost[i][j]: edits between ref[:i] and hyp[:j]
    cost = [list(range(m + 1))]
    for i in range(1, n + 1):
        row = [i] + [0] * m
        above = cost[i - 1]
        r = ref[i - 1]
        for j in range(1, m + 1):
            diagonal = above[j - 1] + (r != hyp[j - 1])
            row[j] = min(diagonal, above[j] + 1, row[j - 1] + 1)
        cost.append(row)
    steps: list[Step] = []
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            op = EQUAL if ref[i - 1] == hyp[j - 1] else SUB
            steps.append(Step(op, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and cost[i][j] == cost[i - 1][j] + 1:
            steps.append(Step(DEL, i - 1, None))
            i -= 1
        else:
            steps.append(Step(INS, None, j - 1))
            j -= 1
    steps.reverse()
    return Alignment(steps, n)


def score_from(wer: float) -> float:
    """The signal's value: 1 − WER, kept within [0, 1]."""
    return max(0.0, min(1.0, 1.0 - wer))
