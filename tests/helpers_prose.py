"""Scoring the prose linter against the hand-labelled corpus in tests/data/prose_corpus/.

``python tests/helpers_prose.py`` prints the per-disclosure precision/recall table the README quotes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kldcard.card.document import read_card
from kldcard.lint.prose import ProseReport, analyse

CORPUS = Path(__file__).parent / "data" / "prose_corpus"
STATUS = {"stated": "S", "inferred": "I", "missing": "M"}


def labels() -> dict[str, dict[str, Any]]:
    return yaml.safe_load((CORPUS / "labels.yaml").read_text(encoding="utf-8"))["cards"]


def report(name: str) -> ProseReport:
    return analyse(read_card(CORPUS / name))


def claim_lines(rep: ProseReport) -> list[int]:
    return sorted({rep.doc.position(c.offset)[0] for c in rep.claims})


def flags(rep: ProseReport) -> set[str]:
    out = {f.kind for f in rep.evidence.flags} if rep.evidence else set()
    if any(not c.labelled for c in rep.claims):
        out.add("unlabelled-number")
    return out


def statuses(rep: ProseReport) -> dict[int, str]:
    """S/I/M per disclosure; a card whose claims were all missed counts as disclosing nothing."""
    if rep.evidence is None:
        return dict.fromkeys(range(1, 10), "M")
    return {n: STATUS[e.status] for n, e in rep.evidence.disclosures.items()}


@dataclass
class Score:
    tp: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(1, 10), 0))
    fp: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(1, 10), 0))
    fn: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(1, 10), 0))
    exact: int = 0  # stated/inferred/missing equal to the label
    total: int = 0
    cards: int = 0

    def precision(self, n: int) -> float:
        d = self.tp[n] + self.fp[n]
        return self.tp[n] / d if d else 1.0

    def recall(self, n: int) -> float:
        d = self.tp[n] + self.fn[n]
        return self.tp[n] / d if d else 1.0


def score(splits: set[str] | None = None) -> Score:
    """Per-disclosure counts over the labelled cards with claims; "found" = stated or inferred."""
    s = Score()
    for name, lab in labels().items():
        if not lab["claims"] or (splits is not None and lab["split"] not in splits):
            continue
        s.cards += 1
        got = statuses(report(name))
        for n in range(1, 10):
            want = lab["D"][n]
            g, w = got[n] != "M", want != "M"
            s.tp[n] += g and w
            s.fp[n] += g and not w
            s.fn[n] += w and not g
            s.exact += got[n] == want
            s.total += 1
    return s


NAMES = ["reference", "runtime", "eval text", "calibration", "context", "positions", "direction", "vocabulary", "aggregation"]


def table(splits: set[str] | None = None) -> str:
    s = score(splits)
    rows = ["| Disclosure | found (labelled) | precision | recall |", "|---|---|---|---|"]
    for n in range(1, 10):
        rows.append(
            f"| D{n} {NAMES[n - 1]} | {s.tp[n] + s.fp[n]} ({s.tp[n] + s.fn[n]}) | {s.precision(n):.2f} | {s.recall(n):.2f} |"
        )
    rows.append(f"\n{s.cards} cards with claims; stated/inferred/missing equal to the label in {s.exact}/{s.total}.")
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover
    print("All labelled cards:\n" + table())
    for split in ("dev", "holdout", "blind", "blind2"):
        print(f"\nsplit {split}:\n" + table({split}))
