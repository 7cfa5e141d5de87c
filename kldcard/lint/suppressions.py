"""Inline suppressions, markdownlint style, and the unused-suppression check (KLD009/KLD010).

In the Markdown body (HTML comments; anywhere on a line, outside fenced code and inline code spans)::

    <!-- kldcard-disable-next-line KLD303 -- quoted from the upstream card -->
    <!-- kldcard-disable-line KLD312 -->
    <!-- kldcard-disable KLD3 -->  ...  <!-- kldcard-enable KLD3 -->
    <!-- kldcard-disable-file KLD104 -->

and in the front matter a YAML comment on the line of the value (or of any key above it)::

    dtype: q8_0  # kldcard: ignore KLD202 -- the upstream reference is only published as Q8_0

Codes are rule codes or prefixes (``KLD3``), separated by commas or spaces; none means every rule.
Text after ``--`` is the reason, kept for the reader. A directive acts per claim: a card-level
finding (KLD301 for every claim lacking the reference, say) is suppressed claim by claim and merged
at the first claim left, so a range around one claim never hides another claim's finding. A directive (or one of its codes) that
suppresses nothing is a KLD009 finding; a malformed one, or one naming an unknown code, is KLD010.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections.abc import Iterable
from dataclasses import dataclass, field

import yaml

from kldcard.card.document import Card
from kldcard.card.regions import fenced
from kldcard.card.splice import split_lines
from kldcard.lint.findings import Finding
from kldcard.lint.registry import RULES

_KINDS = ("disable-next-line", "disable-line", "disable-file", "disable", "enable")
_HTML = re.compile(r"<!--\s*kldcard-(disable-next-line|disable-line|disable-file|disable|enable)(?=\s|-->)(.*?)-->")
_HTML_ANY = re.compile(r"<!--\s*kldcard-(?:dis|en(?!d\b))", re.IGNORECASE)  # not the kldcard-end near-miss marker
_YAML = re.compile(r"#\s*kldcard\s*:\s*ignore\b(.*)$")
_YAML_ANY = re.compile(r"#\s*kldcard\s*:\s*\w", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+\1")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass
class Directive:
    kind: str  # one of _KINDS, or "ignore" (front-matter comment)
    line: int  # 1-based file line of the comment
    column: int
    selectors: tuple[str, ...]  # codes or prefixes, upper case; () means every rule
    reason: str
    text: str  # the directive, normalised (kind and codes, no reason), for messages
    used: set[str] = field(default_factory=set)  # selectors ("" for a bare directive) that suppressed a finding

    def matches(self, code: str) -> str | None:
        """The selector that covers ``code`` ("" for a bare directive), or None."""
        if not self.selectors:
            return ""
        return next((s for s in self.selectors if s == "ALL" or code.startswith(s)), None)


@dataclass
class Directives:
    items: list[Directive]
    invalid: list[Finding]  # KLD010 findings found while parsing


def _known(selector: str) -> bool:
    return selector == "ALL" or (len(selector) >= 4 and any(code.startswith(selector) for code in RULES))


def _parse_args(rest: str) -> tuple[tuple[str, ...], str, list[str]]:
    codes_part, _, reason = rest.partition("--")
    selectors = tuple(s.upper() for s in re.split(r"[\s,]+", codes_part.strip()) if s)
    return selectors, reason.strip(), [s for s in selectors if not _known(s)]


def _invalid(card: Card, line: int, col: int, message: str) -> Finding:
    return Finding(card.path, line, col, "KLD010", RULES["KLD010"].severity, message)


def parse_directives(card: Card) -> Directives:
    """Every directive of ``card`` (body comments and front-matter ``# kldcard: ignore`` comments)."""
    items: list[Directive] = []
    invalid: list[Finding] = []
    lines = _NEWLINE.split(card.body)
    code = fenced(lines)
    for i, raw in enumerate(lines):
        if code[i] or "kldcard-" not in raw.lower():
            continue
        # inline code spans are text: `<!-- kldcard-disable -->` in a sentence documents a directive
        line = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), raw)
        n = card.body_line + i
        spans = []
        for m in _HTML.finditer(line):
            spans.append(m.start())
            selectors, reason, unknown = _parse_args(m.group(2))
            text = " ".join([f"kldcard-{m.group(1)}", *selectors])
            if unknown:
                invalid.append(_invalid(card, n, m.start() + 1, f"`{text}` names unknown rule code(s) {', '.join(unknown)}; see `kldcard lint --list-rules`"))
                selectors = tuple(s for s in selectors if s not in unknown)
                if not selectors:
                    continue
            items.append(Directive(m.group(1), n, m.start() + 1, selectors, reason, text))
        for m in _HTML_ANY.finditer(line):
            if m.start() not in spans:
                invalid.append(
                    _invalid(card, n, m.start() + 1, "malformed kldcard directive; write <!-- kldcard-KIND [CODES] [-- reason] --> with KIND one of " + ", ".join(_KINDS))
                )
    items.extend(_front_matter_directives(card, invalid))
    return Directives(items, invalid)


def _front_matter_directives(card: Card, invalid: list[Finding]) -> Iterable[Directive]:
    if card.front_matter_span is None:
        return
    start, end = card.front_matter_span
    yaml_text = card.text[start:end]
    if "kldcard" not in yaml_text:
        return
    first_line = len(_NEWLINE.findall(card.text[:start])) + 1
    # A '#' inside a quoted or block scalar is text, not a comment: keep only those outside scalars.
    try:
        scalars = [(t.start_mark.index, t.end_mark.index) for t in yaml.scan(yaml_text, Loader=yaml.SafeLoader) if isinstance(t, yaml.ScalarToken)]
    except yaml.YAMLError:  # pragma: no cover - the card parsed, so its YAML scans
        scalars = []
    for i, ln in enumerate(split_lines(yaml_text)):
        line = ln.content
        m = _YAML_ANY.search(line)
        if m is None or any(a <= ln.start + m.start() < b for a, b in scalars):
            continue
        n = first_line + i
        good = _YAML.search(line)
        if good is None or good.start() != m.start():
            invalid.append(_invalid(card, n, m.start() + 1, "malformed kldcard comment; write `# kldcard: ignore CODES [-- reason]`"))
            continue
        selectors, reason, unknown = _parse_args(good.group(1))
        text = " ".join(["kldcard: ignore", *selectors])
        if unknown:
            invalid.append(_invalid(card, n, m.start() + 1, f"`{text}` names unknown rule code(s) {', '.join(unknown)}; see `kldcard lint --list-rules`"))
            selectors = tuple(s for s in selectors if s not in unknown)
            if not selectors:
                continue
        yield Directive("ignore", n, m.start() + 1, selectors, reason, text)


def _pointer_lines(card: Card, pointer: str) -> set[int]:
    """File lines of the node at ``pointer`` and of every key above it."""
    parts = pointer.split("/")[1:]
    return {card.locate("".join("/" + p for p in parts[:k]))[0] for k in range(1, len(parts) + 1)}


def suppress(card: Card, findings: list[Finding], directives: Directives, enabled: set[str]) -> tuple[list[Finding], int]:
    """(the findings no directive suppresses plus KLD009/KLD010 findings, how many were suppressed).

    Grouped findings (one member per claim, :attr:`Finding.group`) are suppressed member by member, so
    a directive covers only the claims it covers; the caller merges the kept members afterwards
    (:func:`~kldcard.lint.findings.merge_groups`). A group counts as suppressed once, when no member
    is kept."""
    by_kind: dict[str, list[Directive]] = {}
    for d in directives.items:
        by_kind.setdefault(d.kind, []).append(d)
    ranges = sorted((d for d in directives.items if d.kind in ("disable", "enable")), key=lambda d: (d.line, d.column))

    def suppressor(f: Finding) -> tuple[Directive, str] | None:
        if not directives.items:  # most cards: and a long one has a finding per claim and disclosure
            return None
        candidates = list(by_kind.get("disable-file", []))
        candidates += [d for d in by_kind.get("disable-line", []) if d.line == f.line]
        candidates += [d for d in by_kind.get("disable-next-line", []) if d.line + 1 == f.line]
        if by_kind.get("ignore"):
            lines = _pointer_lines(card, f.pointer) if f.pointer else {f.line}
            candidates += [d for d in by_kind["ignore"] if d.line in lines]
        for d in candidates:
            sel = d.matches(f.rule_id)
            if sel is not None:
                return d, sel
        last = None
        for d in ranges:  # the last range directive before the finding that covers its code decides
            if d.line > f.line:
                break
            sel = d.matches(f.rule_id)
            if sel is not None:
                last = (d, sel)
        return last if last is not None and last[0].kind == "disable" else None

    kept: list[Finding] = []
    suppressed = 0
    hidden_groups: set[str] = set()
    for f in findings:
        hit = suppressor(f)
        if hit is None:
            kept.append(f)
        else:
            hit[0].used.add(hit[1])
            if f.group:
                hidden_groups.add(f.group)
            else:
                suppressed += 1
    suppressed += len(hidden_groups - {f.group for f in kept})
    own: list[Finding] = []
    if "KLD009" in enabled:
        for d in directives.items:
            if d.kind == "enable":
                continue
            for sel in d.selectors or ("",):
                if sel in d.used or not (sel == "" or any(c.startswith(sel) or sel == "ALL" for c in enabled - {"KLD009"})):
                    continue
                what = f"code {sel} of `{d.text}`" if len(d.selectors) > 1 else f"`{d.text}`"
                own.append(
                    Finding(card.path, d.line, d.column, "KLD009", RULES["KLD009"].severity, f"unused suppression: {what} suppresses no finding; remove it")
                )
    if "KLD010" in enabled:
        own.extend(directives.invalid)
    # The linter's own findings can be suppressed too (a file that keeps a directive on purpose),
    # but that does not count as use of the directive.
    for f in own:
        hit = suppressor(f)
        if hit is None:
            kept.append(f)
        else:
            suppressed += 1
    return kept, suppressed
