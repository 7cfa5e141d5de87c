"""Prose checker: finds KLD claims in a card's Markdown body and the disclosures they lack.

Stages: :func:`kldcard.lint.markdown.scan` (lines, code, tables, sentences) →
:func:`kldcard.lint.claims.find_claims` → :func:`kldcard.lint.evidence.assess` → findings (KLD3xx,
see ``rules_prose.py``). A card without a KLD claim gets no finding. A card with a ``kld_evaluation``
block is linted structurally elsewhere; here its prose numbers are only checked against the block.
"""

from __future__ import annotations

import math
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kldcard.card.document import Card
from kldcard.lint.claims import KLD_TERM, TRAINING_CONTEXT, Claim, KldNumber, find_claims
from kldcard.lint.findings import MORE, Finding, merge_groups
from kldcard.lint.interval_prose import iid_intervals_over_chunks
from kldcard.lint.markdown import HEADING, Doc, scan
from kldcard.lint.reading import NAMES

if TYPE_CHECKING:
    from kldcard.lint.evidence import CardEvidence
    from kldcard.lint.reading import ClaimReading, DisclosureReading

HINTS = {
    1: "name the reference checkpoint: repo id, pinned revision (commit or sha256) and dtype (BF16 expected)",
    2: "name the engine and version/build that produced the logits on both sides, and the hardware",
    3: "name the evaluation text: dataset and split, revision or sha256, token count, chat template or raw",
    4: "name the calibration data (set and size) or say none was used, and whether it overlaps the evaluation text",
    5: "give the context length, the stride and the number of windows/chunks",
    6: "say which positions in each window were scored and how many in total",
    7: "say which direction is reported: KL(P_ref ‖ P_cand) (forward), reverse or JS, in nats",
    8: "say whether the full vocabulary was used, or top-k / a storage floor, and the vocabulary sizes",
    9: "say which statistic each number is (token mean, median, p99, ...) and the uncertainty model",
}


@dataclass(frozen=True)
class ProseReport:
    """Everything the prose checker found in one card (for tests, the corpus benchmark and reporters)."""

    doc: Doc
    claims: list[Claim]
    evidence: CardEvidence | None  # None when the card makes no KLD claim
    readings: list[ClaimReading]  # one per claim, in order (kldcard.lint.reader)

    def status(self, n: int) -> str:
        """The card's status for disclosure ``n``: its claims' best (stated > incomplete > inferred > missing)."""
        got = {r.disclosures[n].status for r in self.readings}
        return next((s for s in ("stated", "incomplete", "inferred") if s in got), "missing")


def analyse(card: Card, doc: Doc | None = None, *, reading: bool = True) -> ProseReport:
    """Claims, readings and disclosure evidence of ``card`` (no findings); ``doc``: its body already
    scanned. ``reading=False``: the claims only (a card with a block needs no reading of its prose)."""
    doc = doc or scan(card.body, card.body_line)
    claims = find_claims(doc)
    if not claims or not reading:
        return ProseReport(doc, claims, None, [])
    # the reader, the disclosure patterns and the recognisers load only for a card whose prose makes a
    # claim (lint startup: compiling the patterns costs about 20 ms)
    from kldcard.lint.evidence import assess, collect
    from kldcard.lint.reader import read_claims

    found = collect(doc)
    evidence = assess(doc, claims, card.metadata, found)
    return ProseReport(doc, claims, evidence, read_claims(doc, claims, card.metadata, found))


def check_prose(card: Card, block: Any | None = None, enabled: set[str] | None = None,
                doc: Doc | None = None, report: ProseReport | None = None, *, merge: bool = True) -> list[Finding]:
    """Findings (KLD3xx) for KLD claims in ``card.body``.

    ``block`` is the card's ``kld_evaluation`` block (raw mapping or validated model), or None.

    Without a block: KLD301–309 per missing disclosure, KLD331–339 per disclosure stated in part
    (each with the reading it was reached from), KLD310/311 at the flagged text, KLD312 per
    unlabelled claim, KLD313 (info) per disclosure inferred from a tool default. With a block: KLD314
    for each prose KLD number that matches no value in its results.

    A card-level finding is emitted once per claim (or per place) as a group
    (:attr:`Finding.group`); ``merge=False`` returns the members, for the runner to suppress per
    claim before it merges them (:func:`~kldcard.lint.findings.merge_groups`).
    """
    report = report or analyse(card, doc, reading=block is None)
    images = image_only_sections(report.doc, report.claims) if block is None else []
    if not report.claims and not images:
        return []
    on = (lambda code: True) if enabled is None else (lambda code: code in enabled)
    out: list[Finding] = []

    def add(code: str, severity: str, offset: int | None, message: str, reading: DisclosureReading | None = None,
            group: str = "") -> None:
        if on(code):
            line, col = report.doc.position(offset) if offset is not None else (report.doc.first_line, 1)
            why = reading.to_json() if reading is not None else None
            out.append(Finding(card.path, line, col, code, severity, message, group=group, reading=why))  # type: ignore[arg-type]

    def done() -> list[Finding]:
        return merge_groups(out) if merge else sorted(out)

    if block is not None:
        values = block_values(block)
        for claim in report.claims:
            for number in claim.numbers:
                why = _contradiction(number, values)
                if why:
                    add("KLD314", "error", number.offset, why)
        return done()

    for offset, heading in images:
        add(
            "KLD315",
            "warning",
            offset,
            f"KLD section {_quote(heading)} shows its numbers only in an image: no reader or linter can check "
            "them; give the values as text (a table) next to the chart",
        )
    if not report.claims:
        return done()
    ev = report.evidence
    assert ev is not None
    # A card-level finding is one per card, but its members are per claim (or per place): grouped,
    # they are suppressed claim by claim and then merged at the first claim left (merge_groups).
    for n in NAMES:
        if report.status(n) == "missing":
            for claim, r in zip(report.claims, report.readings):
                add(f"KLD30{n}", "error", claim.offset, f"KLD claim{MORE} does not state the {NAMES[n]} (D{n}): "
                    f"{HINTS[n]}", r.disclosures[n], group=f"KLD30{n}")
            continue
        for claim, r in zip(report.claims, report.readings):
            d = r.disclosures[n]
            if d.status == "incomplete":  # claims that share a reading make one finding
                add(f"KLD33{n}", "warning", claim.offset, f"KLD claim{MORE} {describe(d)}; still needed: "
                    f"{'; '.join(d.needs)}", d, group=f"KLD33{n}:{_reading_key(d)}")
    # what the readings take from the tool, alone or beside the card's own part, in the readings' words (counted over
    # the claim's own chunks, not the default length): one finding per card (findings are identified by file:line:col:code)
    inferred = {n: words for n in NAMES if (words := _tool_words(report, n))}
    if inferred and ev.tool is not None:
        items = "; ".join(f"D{n} {NAMES[n]}: {words}" for n, words in inferred.items())
        add("KLD313", "info", ev.tool.offset, f"inferred from the {ev.tool.name} defaults: {items}; state them on the card",
            group="KLD313")
    for flag in ev.flags:  # one finding per kind per card: the first place the card says it
        quote = _quote(flag.text)
        if flag.kind == "quantized-reference":
            add("KLD310", "warning", flag.offset, f"KLD reference is a quantized checkpoint ({quote}); measure against BF16",
                group="KLD310")
        else:
            add("KLD311", "warning", flag.offset, f"KLD evaluation text is drawn from the calibration data ({quote}); "
                "evaluate on held-out text", group="KLD311")
    for iid_at in iid_intervals_over_chunks(report.doc.scanned):
        add("KLD320", "info", iid_at, "the interval treats tokens as independent, but the text was scored in "
            "context windows: tokens sharing a window are correlated, so it is too narrow; use a block bootstrap",
            group="KLD320")
    # KLD309 already says the whole card names no statistic, KLD339 that the claim's reading has an
    # uncertainty but no statistic; KLD312 is for the number left bare on a card that names one
    # elsewhere (or whose tool implies one).
    for claim, reading in zip(report.claims, report.readings) if report.status(9) != "missing" else []:
        if not claim.labelled and reading.disclosures[9].status != "incomplete":  # else KLD339 says it
            add(
                "KLD312",
                "warning",
                claim.offset,
                f"KLD {_what(claim)} does not say which statistic it is (mean? median? p99?); label it, e.g. 'Mean KLD'",
            )
    return done()


def _reading_key(d: DisclosureReading) -> str:
    """The same value read from the same first statement: one finding for every claim it applies to."""
    first = d.evidence[0] if d.evidence else None
    return repr((sorted(d.value.items(), key=repr), d.needs, first and (first.line, first.key, first.text)))


WHAT_READ = {
    1: "names {v} as the reference",
    2: "names the runtime {v}",
    3: "names the evaluation text {v}",
    4: "names the calibration data {v}",
    5: "gives the context as {v}",
    6: "gives the scored positions as {v}",
    7: "gives the direction as {v}",
    8: "gives the vocabulary as {v}",
    9: "gives the aggregation as {v}",
}


def _tool_words(report: ProseReport, n: int) -> str:
    """What the card's D``n`` takes from its tool, in words ("" when nothing): the first inferred reading's where no
    claim states it, else the first reading the tool completed (tool_defaults.fixed_by_tool: "8 chunks" under
    llama-perplexity is the card's, the second half of each the tool's)."""
    status = report.status(n)
    for r in report.readings:
        d = r.disclosures[n]
        if (status == "inferred" and d.status == "inferred") or (status != "inferred" and d.inferred_keys and d.status == status):
            return next((e.text for e in d.evidence if e.tool), "")
    return ""


def describe(d: DisclosureReading) -> str:
    """What was read, with where: "names google/gemma-3-12b-it (BF16) as the reference (front matter
    /base_model; line 12 'vs BF16')"."""
    n = d.disclosure
    v = d.said  # what the card gives, not what its tool fixes
    if n == 1:
        dtype = f" ({v['dtype']})" if v.get("dtype") else ""
        what = f"{v['repo']}{dtype}" if v.get("repo") else (f"{v['dtype']} weights" if v.get("dtype") else "a model")  # a role or a local path: the evidence quotes it
    elif n == 2:
        what = " ".join(str(v[k]) for k in ("engine", "version", "backend", "device") if v.get(k))
    elif n == 3:
        what = " ".join(str(x) for x in (v.get("name", ""), f"({v['tokens']} tokens)" if v.get("tokens") else "") if x)
    elif n == 4:
        what = str(v.get("dataset", "")) + (f" ({v['size']})" if v.get("size") else "")
    elif n == 5:
        what = ", ".join(f"{x} {k.replace('n_ctx', 'tokens per window')}" for k, x in v.items())
    else:
        what = ", ".join(f"{k} {x}" if not isinstance(x, bool) else k for k, x in v.items())
    where = "; ".join(f"front matter {e.key}" if e.key else f"{e.tool}: {e.text}" if e.tool else f"line {e.line} {_quote(e.text, 40)}"
                      for e in d.evidence[:3])
    from kldcard.lint.reader import clean

    said = WHAT_READ[n].format(v=clean(what, 100)) if what else f"mentions the {NAMES[n]} without a value the reader can use"
    return said + f" ({where})"


IMAGE = re.compile(r"!\[[^\]\n]{0,300}\]\([^)\s]{0,2000}|<img\b[^<>]{0,2000}>", re.IGNORECASE)
# A chart of something else (perplexity, speed, size) under a KLD heading is not the KLD's numbers.
OTHER_CHART = re.compile(r"ppl|perplexity|speed|throughput|t/s|tok/s|size|memory|vram", re.IGNORECASE)


def image_only_sections(doc: Doc, claims: list[Claim]) -> list[tuple[int, str]]:
    """(body offset, heading) of each heading naming KLD whose section holds an image and no KLD claim.

    A section runs to the next heading of the same or a higher level. Linear: section ends come from
    one backward pass over the headings, and each line is read once per enclosing KLD heading (at
    most six)."""
    claim_lines = sorted(doc.line_index(c.offset) for c in claims)
    headings = [(i, len(line.lstrip()) - len(line.lstrip().lstrip("#"))) for i, line in enumerate(doc.lines)
                if "#" in line and not doc.code[i] and HEADING.match(line)]  # fmt: skip
    ends = [len(doc.lines)] * len(headings)
    nxt = [len(doc.lines)] * 7  # first later heading at each level
    for k in range(len(headings) - 1, -1, -1):
        i, level = headings[k]
        ends[k] = min(nxt[1 : level + 1])
        nxt[level] = i
    out = []
    for (i, _level), end in zip(headings, ends):
        line = doc.lines[i]
        if not KLD_TERM.search(line) or TRAINING_CONTEXT.search(line):
            continue
        p = bisect_left(claim_lines, i)
        if p < len(claim_lines) and claim_lines[p] < end:
            continue
        for j in range(i + 1, end):
            m = IMAGE.search(doc.lines[j]) if not doc.code[j] else None
            if m is not None and not OTHER_CHART.search(m.group(0)):
                out.append((doc.starts[i], line.strip().lstrip("#").strip()))
                break
    return out


def _quote(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _what(claim: Claim) -> str:
    if claim.kind == "table":
        return "column"
    return f"number {claim.numbers[0].text}" if claim.numbers else "number"


def block_values(block: Any) -> list[tuple[str, float]]:
    """(JSON pointer, value) of every number under the block's ``candidates[].results``.

    ``block`` is the raw mapping or a validated :class:`~kldcard.schema.KldEvaluation`.
    """
    out: list[tuple[str, float]] = []
    if hasattr(block, "model_dump"):
        block = block.model_dump(mode="python")

    def walk(node: Any, path: str) -> None:
        if isinstance(node, bool):
            return
        if isinstance(node, (int, float)):
            if math.isfinite(node):
                out.append((path, float(node)))
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}/{i}")

    candidates = block.get("candidates") if isinstance(block, dict) else None
    for i, cand in enumerate(candidates if isinstance(candidates, list) else []):
        if isinstance(cand, dict) and "results" in cand:
            walk(cand["results"], f"/kld_evaluation/candidates/{i}/results")
    return out


def _contradiction(number: KldNumber, values: list[tuple[str, float]]) -> str | None:
    """None when ``number`` equals a block value within its printed rounding, else the message."""
    if not values:
        return None
    tol = number.decimals_half_ulp * (1 + 1e-9) + 1e-15
    if any(abs(v - number.value) <= tol for _, v in values):
        return None
    path, nearest = min(values, key=lambda pv: abs(pv[1] - number.value))
    return (
        f"KLD {number.text} in the text matches no value in kld_evaluation results "
        f"(nearest: {nearest:.6g} nats at {path}); update the text or the block"
    )


__all__ = ["ProseReport", "analyse", "block_values", "check_prose"]
