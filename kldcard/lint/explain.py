"""``kldcard lint --explain``: the reading of each KLD claim as a table a reviewer can check.

One block per claim (where it is, what kind, the tool recognised, its numbers), then a row per
disclosure: status, the value read, and the evidence (``line:col "quoted span"``, ``front matter
/base_model``, or the tool default an ``inferred`` reading comes from), and for ``incomplete`` and
``missing`` what is still needed. Formatting only; every string from the card goes through
:func:`kldcard.lint.reader.clean` (one line, no control or bidi characters).
"""

from __future__ import annotations

from typing import Any

from kldcard.lint.findings import LintResult
from kldcard.lint.reader import clean
from kldcard.lint.read.numbers import parse_number
from kldcard.lint.reading import ClaimReading, DisclosureReading, Evidence, NumberReading

MAX_NUMBERS = 6  # numbers listed per claim; the rest are counted


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return clean(str(v), 60)


def evidence_text(e: Evidence) -> str:
    if e.key is not None:
        return f"front matter {e.key} {clean(repr(e.text), 60)}"
    if e.tool is not None:
        return f"{e.line}:{e.column} {e.tool} default: {clean(e.text, 90)}"
    return f"{e.line}:{e.column} {clean(repr(e.text), 70)}"


def disclosure_row(d: DisclosureReading) -> list[str]:
    value = ", ".join(f"{k}={_value(v)}" for k, v in d.value.items()) or "-"
    rows = [f"  D{d.disclosure} {d.name:<22} {d.status:<10} {value}"]
    rows += [f"      evidence: {evidence_text(e)}" for e in d.evidence]
    if d.needs and d.status != "stated":
        rows.append(f"      needs: {'; '.join(d.needs)}")
    return rows


def _rescaled(n: NumberReading) -> bool:
    """Whether the number was read in another scale than written ("41 mbits" is 0.041 bits)."""
    try:
        return parse_number(n.text.strip("*_`~≈"))[0] != n.value
    except ValueError:
        return False


def claim_block(file: str, k: int, c: ClaimReading) -> list[str]:
    tool = f", {c.tool}" if c.tool else ""
    out = [f"{file}:{c.line}:{c.column}: claim {k} ({c.kind}{tool}): {clean(repr(c.text), 100)}"]
    if c.numbers:
        shown = []
        for n in c.numbers[:MAX_NUMBERS]:
            # a value read in thousandths ("41 mbits") shows as what it is in the unit: "41 (0.041 bits)"
            unit = n.unit and (f"{n.value:g} {n.unit}" if n.unit in ("bits", "nats") and _rescaled(n) else n.unit)
            extra = ", ".join(x for x in (n.candidate and clean(n.candidate, 30), n.statistic, unit) if x)
            shown.append(clean(n.text, 30) + (f" ({extra})" if extra else ""))
        more = f" … and {len(c.numbers) - MAX_NUMBERS} more" if len(c.numbers) > MAX_NUMBERS else ""
        out.append("  numbers: " + "; ".join(shown) + more)
    for n in sorted(c.disclosures):
        out += disclosure_row(c.disclosures[n])
    return out


def render_explain(result: LintResult) -> str:
    """The reading of every claim of every card linted (cards without a kld_evaluation block)."""
    out: list[str] = []
    for file in result.files:
        claims = result.readings.get(file, [])
        if not claims:
            out.append(f"{file}: no KLD claim read (or the card has a kld_evaluation block: KLD1xx check it)")
            continue
        out.append(f"{file}: {len(claims)} KLD claim{'s' * (len(claims) != 1)} read")
        for k, c in enumerate(claims, 1):
            out += claim_block(file, k, c)
        out.append("")
    return "\n".join(out) + "\n"
