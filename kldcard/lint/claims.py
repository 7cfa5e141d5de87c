"""Find KLD claims in a card body: tables, pasted tool output, and sentences that give a KLD number.

A *claim* is a place where the card reports a measured KL divergence (nats, in whatever direction the
card chose). Mentions without a number ("What is KLD?", "lower KLD is better"), rules of thumb, code
that computes KL, and KL terms of a training objective (a KL penalty, a target KL) are not claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kldcard.lint.markdown import LIST_ITEM, Doc, Table

# ASCII semantics: case-insensitive matching with Unicode folding is ~3x slower and every keyword is
# ASCII; the few non-ASCII symbols (μ, Δp, β) stand outside \b groups because \b is ASCII-only here.
I = re.IGNORECASE | re.ASCII

# "KLD", "KL-div", "KL divergence", "Kullback-Leibler", "KL(" — but not "KLD-QA", "kld_results.csv".
KLD_TERM = re.compile(
    r"(?<![A-Za-z_])(?:KLD(?![A-Za-z_]|-[A-Za-z])|KL[- ]?div(?:ergence)?\b|Kullback[-‐–— ]Leibler|D_?KL\b|"
    r"KL(?=\s*\()|KL\b(?!-))",
    I,
)
# Decimal numbers that could be a divergence; not versions (v0.2.8), sizes (5.0bpw), model names
# (Qwen3.5, Llama-3.1-8B) or percentages.
NUMBER = re.compile(r"(?<![\w.\-/])-?(?:\d+\.\d+|\.\d+)(?:[eE][-+]?\d+)?(?![\w%/]|\.\d|-\w)")
# Statistic labels that say which summary a number is.
STAT_LABEL = re.compile(
    r"\b(?:mean|average[ds]?|avg|median|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d)?|\d{1,2}(?:st|nd|th)\s*percentile"
    r"|percentile|token[- ]mean)\b|μ"
    r"|(?<![\w.])\d{1,2}(?:\.\d+)?%\s*(?:KLD|KL\b)|(?:KLD|KL[- ]?div\w*)\s*\(?(?:p|@)?\d{1,2}(?:\.\d+)?%",
    I,
)
# Between a number and a KLD term that follows it only a statistic word may stand ("0.0009 mean KLD").
AFTER_GAP = re.compile(r"^\s*(?:nats?\s*)?(?:\(?(?:mean|median|average|avg|token[- ]mean)\)?\s*)?$", I)
# Other metrics: a number right after one of these belongs to it, not to KLD.
OTHER_METRIC = re.compile(
    r"Δp|β|\b(?:PPL|perplexity|top[- ]?\d+|top[- ]?k|agreement|accuracy|MMLU|GSM8K|delta[- ]p|same top|"
    r"size|GB|GiB|bpw|bits|t/s|score|recovery|temp(?:erature)?|min-p|minutes?|seconds?|hours?|"
    r"beta|lr|learning rate)\b",
    I,
)
# "- Median: 0.0071", "* p99 = 0.31", "- 中位数 (median): 0.0071": a label, then one number.
SIBLING_STAT = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+[^:=\d]{0,30}?\b(?:mean|average|avg|median|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d)?)\b"
    r"[^:=\d]{0,12}[:=]\s*(?P<num>-?\d*\.\d+(?:[eE][-+]?\d+)?)\s*(?:nats?)?\s*\.?\s*$",
    I,
)
PARENTHETICAL = re.compile(r"\([^()]{0,80}\)")
# Uncertainty words are transparent: "0.0046 (95% CI 0.0044–0.0048)" are all KLD numbers.
UNCERTAINTY = re.compile(r"±|\bCI\b|\bSE\b|\bSEM\b|standard error|\bstd\b|\[|–|\bto\b", I)
# A KL term inside a training objective or RL setup is not a quality claim.
TRAINING_CONTEXT = re.compile(
    r"β|\b(?:penalty|penali[sz]ed|coefficient|coef|beta|reward|polic(?:y|ies)|regulari[sz]\w*|PPO|GRPO|DPO|"
    r"RLHF|target KL|kl_coef|loss|objective|KL (?:term|budget|constraint|control)|threshold|cut-?off|criterion|"
    r"prun\w+)\b",
    I,
)
# Generic statements and rules of thumb ("a KLD below 0.01 is usually imperceptible").
GENERIC_CONTEXT = re.compile(r"\b(?:rule of thumb|usually|typically|generally|in general|as a rule)\b", I)

# llama-perplexity's printed block (current and pre-#16321) and exllamav3 model_diff's lines.
LLAMA_STAT = re.compile(
    r"^\s*(?:Mean|Median|Maximum|Minimum|\d{1,2}(?:\.\d+)?%)\s+KLD\s*:\s*(-?\d+\.\d+)", I
)
LLAMA_HEADER = re.compile(r"^\s*=+\s*KL divergence statistics\s*=+", I)
# llama-perplexity's cumulative per-chunk line in KL mode: [n] PPL ± se, ln ratio ± se, KLD ± se, Δp ± %, same ± %
LLAMA_CHUNK = re.compile(
    r"^\s*\[\d+\]\s*\d+\.\d+\s*±\s*\d+\.\d+\s+-?\d+\.\d+\s*±\s*\d+\.\d+\s+(?P<kld>-?\d+\.\d+\s*±\s*\d+\.\d+)\s+"
    r"-?\d+\.\d+\s*±"
)
MODEL_DIFF_STAT = re.compile(r"^\s*--\s*KL[- ]?div(?:ergence)?\s*\(\s*\w+\s*,\s*\w+\s*\)\s*:\s*(-?\d+\.\d+)", I)


@dataclass(frozen=True)
class KldNumber:
    """A number the card presents as a KL divergence value (nats unless the card says otherwise)."""

    text: str
    value: float
    offset: int  # body offset

    @property
    def decimals_half_ulp(self) -> float:
        """Half a unit in the last printed digit: the rounding the printed text allows."""
        mant, _, exp = self.text.lower().partition("e")
        digits = len(mant.split(".")[1]) if "." in mant else 0
        return 0.5 * 10.0 ** (-digits + (int(exp) if exp else 0))


@dataclass
class Claim:
    """One KLD claim: a table, a pasted tool-output block, or a line of prose."""

    kind: str  # "table" | "tool-output" | "sentence"
    offset: int  # body offset the claim is located at
    text: str  # the header row, first statistic line, or the sentence
    labelled: bool  # every number says which statistic it is (mean, median, p99, ...)
    numbers: list[KldNumber] = field(default_factory=list)
    tool: str | None = None  # pasted output: "llama-perplexity", "llama-perplexity-chunks" or "model_diff"


def find_claims(doc: Doc) -> list[Claim]:
    """All KLD claims in ``doc``, ordered by position."""
    if not KLD_TERM.search(doc.text):
        return []
    tool_claims, tool_lines = _tool_output(doc)
    claims = tool_claims + [c for t in doc.tables for c in _table(doc, t)] + _sentences(doc, tool_lines)
    claims.sort(key=lambda c: c.offset)
    return claims


def _numbers(text: str, base: int) -> list[KldNumber]:
    return [KldNumber(m.group(0), float(m.group(0)), base + m.start()) for m in NUMBER.finditer(text)]


def _tool_output(doc: Doc) -> tuple[list[Claim], set[int]]:
    """Pasted llama-perplexity / model_diff statistics (fenced or not), and the lines they cover."""
    claims: list[Claim] = []
    lines: set[int] = set()
    current: Claim | None = None
    for i, line in enumerate(doc.lines):
        llama, diff, chunk = LLAMA_STAT.match(line), MODEL_DIFF_STAT.match(line), LLAMA_CHUNK.match(line)
        if chunk:  # running (cumulative) KLD of the chunks so far: not labelled as a mean
            if current is None or current.tool != "llama-perplexity-chunks":
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=False, tool="llama-perplexity-chunks")
                claims.append(current)
            current.numbers.extend(_numbers(chunk.group("kld"), doc.starts[i] + chunk.start("kld")))
            lines.add(i)
        elif llama or diff:
            tool = "llama-perplexity" if llama else "model_diff"
            if current is None or current.tool != tool:
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=bool(llama), tool=tool)
                claims.append(current)
            current.numbers.extend(_numbers(line.split(":", 1)[1], doc.starts[i] + line.index(":") + 1))
            lines.add(i)
        elif LLAMA_HEADER.match(line):
            lines.add(i)
            current = None
        else:  # any other line (blank, header, Δp block) ends the block
            current = None
    return claims, lines


def _table(doc: Doc, t: Table) -> list[Claim]:
    header = t.cells[t.header]
    cols = [k for k, (_, text) in enumerate(header) if KLD_TERM.search(text) and not TRAINING_CONTEXT.search(text)]
    claims: list[Claim] = []
    if cols:
        numbers = [
            n for r in t.rows for k in cols if k < len(t.cells[r]) for n in _numbers(t.cells[r][k][1], t.cells[r][k][0])
        ]
        if numbers:
            labelled = all(_header_labelled(header[k][1]) for k in cols) or _caption_labels(doc, t.header)
            claims.append(Claim("table", header[cols[0]][0], doc.lines[t.header].strip(), labelled, numbers))
        return claims
    # Transposed tables: the KLD statistic is a row ("| Mean KLD | 0.021 | 0.004 |").
    for r in t.rows:
        cells = t.cells[r]
        if cells and KLD_TERM.search(cells[0][1]) and not TRAINING_CONTEXT.search(cells[0][1]):
            numbers = [n for off, text in cells[1:] for n in _numbers(text, off)]
            if numbers:
                claims.append(Claim("table", cells[0][0], doc.lines[r].strip(), bool(STAT_LABEL.search(cells[0][1])), numbers))
    return claims


def _header_labelled(cell: str) -> bool:
    return bool(STAT_LABEL.search(cell) or re.search(r"\d{1,2}(?:\.\d+)?\s*%", cell))


def _caption_labels(doc: Doc, header: int) -> bool:
    """Whether a sentence of the paragraph just above a table says which statistic its "KLD" column holds."""
    i = header - 1
    while i >= 0 and not doc.lines[i].strip():
        i -= 1
    if i < 0 or header - i > 2 or doc.code[i]:
        return False
    top = i
    while top > 0 and i - top < 3 and doc.lines[top - 1].strip() and not doc.code[top - 1]:
        top -= 1
    begin, end = doc.starts[top], doc.starts[i] + len(doc.lines[i])
    for s, e in doc.sentences:
        if s < end and e > begin:
            caption = NUMBER.sub(" ", doc.text[s:e])
            if KLD_TERM.search(caption) and STAT_LABEL.search(caption):
                return True
    return False


def _sentences(doc: Doc, tool_lines: set[int]) -> list[Claim]:
    claims: list[Claim] = []
    seen_lines: set[int] = set()
    text = doc.text
    for start, end in doc.sentences:
        sentence = text[start:end]
        terms = list(KLD_TERM.finditer(sentence))
        if not terms or TRAINING_CONTEXT.search(sentence) or GENERIC_CONTEXT.search(sentence):
            continue
        numbers = [
            n
            for n in _numbers(sentence, start)
            if doc.line_index(n.offset) not in tool_lines and _attached(sentence, n.offset - start, len(n.text), terms)
        ]
        if not numbers:
            continue
        labelled = all(_labelled(sentence, n.offset - start, len(n.text), terms) for n in numbers)
        for n in numbers:
            line = doc.line_index(n.offset)
            if line in seen_lines:  # one claim per line; later numbers on it join that claim
                claims[-1].numbers.append(n)
                continue
            seen_lines.add(line)
            claims.append(Claim("sentence", n.offset, sentence.strip(), labelled, [n]))
    return claims + _sibling_items(doc, claims, tool_lines)


def _sibling_items(doc: Doc, claims: list[Claim], tool_lines: set[int]) -> list[Claim]:
    """List items that continue a KLD list item with another statistic ("- Median: 0.0071")."""
    out: list[Claim] = []
    claimed = {doc.line_index(c.offset) for c in claims}
    for c in claims:
        i = doc.line_index(c.offset)
        if not LIST_ITEM.match(doc.lines[i]):
            continue
        j = i + 1
        while j < len(doc.lines) and LIST_ITEM.match(doc.lines[j]) and j not in claimed and j not in tool_lines:
            m = SIBLING_STAT.match(doc.lines[j])
            if m is None or OTHER_METRIC.search(doc.lines[j]):
                break
            out.append(Claim("sentence", doc.starts[j] + m.start("num"), doc.lines[j].strip(), True,
                             _numbers(m.group("num"), doc.starts[j] + m.start("num"))))  # fmt: skip
            j += 1
    return out


def _labelled(sentence: str, pos: int, length: int, terms: list[re.Match[str]]) -> bool:
    """Whether a statistic label stands near the number and its KLD term ("mean KLD of 0.02 nats")."""
    before = [t for t in terms if t.end() <= pos]
    after = [t for t in terms if t.start() >= pos + length]
    start = max(0, (before[-1].start() if before else pos) - 20)
    end = (after[0].end() if after and not before else pos + length) + 25
    return bool(STAT_LABEL.search(sentence[start:end]))


def _attached(sentence: str, pos: int, length: int, terms: list[re.Match[str]]) -> bool:
    """Whether the number at ``pos`` belongs to a KLD term of the sentence.

    It does when the nearest KLD term before it is at most 45 characters away with no other metric
    and no other number in between (uncertainty words such as "±" or "95% CI" pass through), or when
    a KLD term follows within 15 characters ("0.0009 mean KLD").
    """
    before = [t for t in terms if t.end() <= pos]
    if before:
        gap = sentence[before[-1].end() : pos]
        # A parenthetical does not detach the number: "KL-divergence (mean over 512 samples): 0.0064".
        if len(PARENTHETICAL.sub("", gap)) <= 45 and not OTHER_METRIC.search(gap):
            nums = list(NUMBER.finditer(gap))
            if not nums or UNCERTAINTY.search(gap):
                return True
    after = [t for t in terms if t.start() >= pos + length]
    if after:
        gap = sentence[pos + length : after[0].start()]
        if AFTER_GAP.match(gap):
            return True
    return False
