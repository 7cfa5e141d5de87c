"""Find KLD claims in a card body: tables, pasted tool output, and sentences that give a KLD number.

A *claim* is a place where the card reports a measured KL divergence (nats, in whatever direction the
card chose). Mentions without a number ("What is KLD?", "lower KLD is better"), rules of thumb, code
that computes KL, and KL terms of a training objective (a KL penalty, a target KL) are not claims.

Tables are read by :mod:`kldcard.lint.claim_tables`, pasted tool output by
:mod:`kldcard.lint.claim_tool_output`; sentences here. The types are :mod:`kldcard.lint.claim_types`'s.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_attach import KldTerms, number_attached, number_labelled
from kldcard.lint.claim_tables import flat_tables, table_claims
from kldcard.lint.claim_tool_output import tool_output
from kldcard.lint.claim_types import Claim, KldNumber, numbers_in  # noqa: F401  (KldNumber is read from here by prose and the reader)
from kldcard.lint.claims_patterns import (  # noqa: F401  (KLD_TERM, TRAINING_CONTEXT are read from here by prose and evidence)
    GENERIC_CONTEXT,
    KLD_TERM,
    NUMBER,
    OTHER_METRIC,
    RELATIVE,
    SIBLING_STAT,
    STAT_LABEL,
    TRAINING_CONTEXT,
)
from kldcard.lint.markdown import LIST_ITEM, Doc
from kldcard.lint.read import claim_context, claim_numbers, claim_terms, enumerations, relative_changes, stated_bounds, training_output, wrapped_comments
from kldcard.lint.read.bound_lists import bound_item
from kldcard.lint.read.csv_tables import csv_tables
from kldcard.lint.read.exact_zeros import exact_zeros
from kldcard.lint.read.indented_tables import indented_tables
from kldcard.lint.read.key_values import key_values
from kldcard.lint.read.lead_in_lists import lead_in_lists
from kldcard.lint.read.value_lists import value_lists
from kldcard.lint.scan import search, spans_with


# a code line (fenced or indented, often pasted unfenced) that sets a lower-case variable to a literal zero starts
# an accumulator: code that computes KL, not a measured zero (those read.exact_zeros finds: "KL = 0", "k3_kl == 0")
# (declared as the languages the cards paste declare it: "let mut kl = 0.0;", "var kl = 0;", "float kl = 0.0f;", "double kl = 0;")
ZERO_INIT = re.compile(r"^\s*(?:(?:let(?:\s+mut)?|var|const|auto|float|double|int|f32|f64)\s+)?[a-z_][a-z0-9_.]*(?:\s*:\s*\w+)?\s*=\s*0(?:\.0*)?f?\s*;?\s*$")

# a line of code or JSON pasted without a fence (a key, an assignment, a call, a bare array value): a "sentence"
# then runs over many such lines, and a number on one of them belongs to the KL term only on the same line
# ('"kl_nats": 0.029976' yes; '    0.4151851851851852,' of "epoch_activation" or 'ax.set_ylim(0, 0.075)' no)
CODE_LINE = re.compile(r'^\s*(?:"[\w.-]+"\s*:|[a-z_][\w.]*(?:\[[^\]]*\])?(?:\s*,\s*[a-z_][\w.]*)*\s*=[^=]|[a-z_][\w.]*\(|(?<=\s)[-+]?\d[\d.e+-]*\d,?\s*$)')  # (a bare value indented, as in an array)

# a literal passed positionally to a call on a line of code ("return KLDiagnostic(0.0, 0.0, [])",
# "torch.quantile(kl, 0.95)") is an argument of code, not a measurement (plain grammar of code: a name, "(",
# arguments separated by commas); a field named in a printed record ("KLStats(mean=0.031)") is no such argument, nor a
# value in its wrapper ("tensor(0.0678)", "np.float64(0.0456)": how a framework prints a result) or an argument after a
# quoted KL label ('log("mean KL", 0.0217)': a logged result). Bounded: a name of at most 60 characters and at most
# CALL_REACH characters of arguments before the number (a long line must not make the search quadratic).
CALL_REACH = 240
CALL_ARGUMENT = re.compile(r"(?<![\w.])(?P<callee>[A-Za-z_][\w.]{0,60})\((?P<args>(?:[^()=:\n]*,)?)\s*$")
VALUE_WRAPPER = re.compile(r"(?:^|\.)(?:tensor|array|asarray|float\d*|double|Decimal|round|item|scalar)$")
QUOTED = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")


def find_claims(doc: Doc) -> list[Claim]:
    """All KLD claims in ``doc``, ordered by position."""
    if search(KLD_TERM, doc.scanned) is None:
        return []
    tool_claims, tool_lines = tool_output(doc)
    flat_claims = flat_tables(doc, tool_lines) + value_lists(doc, tool_lines)
    flat_claims += key_values(doc, tool_lines) + csv_tables(doc, tool_lines) + indented_tables(doc, tool_lines)  # "KL divergence" / "<0.05"; "a,mean_kld,b"
    claims = tool_claims + flat_claims + [c for t in doc.tables for c in table_claims(doc, t)] + _sentences(doc, tool_lines)
    claims += lead_in_lists(doc, tool_lines | {doc.line_index(c.offset) for c in claims})  # "...KL vectors:" + "- A: mean 0.047"
    claims += exact_zeros(doc, tool_lines | {doc.line_index(c.offset) for c in claims})  # "k3_kl == 0", "KL exatamente 0"
    # an item of a list titled as thresholds or limits is a bound, not a measurement (R4; read.bound_lists)
    claims = [c for c in claims if c.kind == "table" or not bound_item(doc, doc.line_index(c.offset))]
    claims.sort(key=lambda c: c.offset)
    return claims


def _sentences(doc: Doc, tool_lines: set[int]) -> list[Claim]:
    claims: list[Claim] = []
    seen_lines: set[int] = set()
    text = doc.text
    spans = [(doc.sentences[k][0], text[slice(*doc.sentences[k])])
             for k in spans_with(KLD_TERM, doc.scanned, doc.sentences, doc.sentence_starts)]
    for start, sentence in spans + wrapped_comments.wrapped_sentences(doc):  # and sentences wrapped across comment lines
        if ("." not in sentence and "," not in sentence) or NUMBER.search(sentence) is None:  # no number, no claim
            continue
        terms = list(KLD_TERM.finditer(sentence))
        # (a measured value "against a 0.03 threshold" is still a measurement: read.claim_terms.GATE)
        if not terms or claim_context.training_sentence(sentence) or GENERIC_CONTEXT.search(sentence):
            continue
        near = KldTerms(terms)
        bound = stated_bounds.bound_start(sentence)  # "limits: mean KL 0.025": a bound from there on
        candidates = [n for n in numbers_in(sentence, start) if doc.line_index(n.offset) not in tool_lines
                      and claim_numbers.is_kld(sentence, n.offset - start, len(n.text))
                      and not claim_terms.is_gate(sentence, n.offset - start, len(n.text))
                      and (bound is None or n.offset - start < bound)]
        numbers = [n for n in candidates if number_attached(sentence, n.offset - start, len(n.text), near)]
        numbers = claim_terms.chain(sentence, start, candidates, numbers, OTHER_METRIC) if numbers else numbers
        numbers = enumerations.listed(sentence, start, candidates, numbers, OTHER_METRIC) if numbers else numbers
        if not numbers:
            continue
        at = {n.offset - start for n in numbers}
        labelled = all(number_labelled(sentence, n.offset - start, len(n.text), near, at) for n in numbers)
        for n in numbers:
            line = doc.line_index(n.offset)
            if training_output.training_list(doc, line):  # "- Rewards/chosen: 1.54" ... "- Kl: 1080.3": a trainer's metrics
                continue
            if CODE_LINE.match(doc.lines[line]) and not KLD_TERM.search(doc.lines[line]):  # "    0.41518,", "figsize=(6.4, 2.7))"
                continue
            code = doc.code[line] or doc.lines[line].startswith(("    ", "\t"))  # fenced or indented
            if code and (ZERO_INIT.match(doc.lines[line]) or _call_argument(doc, n.offset)):  # "    total_kl = 0.0", "f(kl, 0.95)"
                continue
            if line in seen_lines:  # one claim per line; later numbers on it join that claim
                claims[-1].numbers.append(n)
                continue
            seen_lines.add(line)
            claims.append(Claim("sentence", n.offset, sentence.strip(), labelled, [n]))
    claims.extend(_relative(doc, tool_lines, {doc.line_index(c.offset) for c in claims}))
    return claims + _sibling_items(doc, claims, tool_lines)


def _call_argument(doc: Doc, offset: int) -> bool:
    """Whether the number at ``offset`` is a positional argument of a call on its line."""
    line = doc.line_index(offset)
    m = CALL_ARGUMENT.search(doc.text[max(doc.starts[line], offset - CALL_REACH) : offset])
    if m is None or VALUE_WRAPPER.search(m.group("callee")):
        return False
    return not any(KLD_TERM.search(q.group(0)) for q in QUOTED.finditer(m.group("args")))


def _relative(doc: Doc, tool_lines: set[int], taken: set[int]) -> list[Claim]:
    out = []
    for k in spans_with(RELATIVE, doc.scanned, doc.sentences, doc.sentence_starts):
        start, end = doc.sentences[k]
        sentence = doc.text[start:end]
        if "%" not in sentence and "x" not in sentence.lower() and "×" not in sentence:
            continue
        for m in RELATIVE.finditer(sentence):
            for at in [m.start(), *claim_terms.further(sentence, m.end())]:  # "... by 11.9% ... and by 7.7%"
                line = doc.line_index(start + at)
                if line in tool_lines or line in taken or TRAINING_CONTEXT.search(sentence):
                    continue
                taken.add(line)
                out.append(Claim("sentence", start + at, sentence.strip(), bool(STAT_LABEL.search(m.group(0)))))
    for pattern in relative_changes.CHANGES:  # "held-out KL fell ~90%", "cuts the mean KLD by a third"
        for k in spans_with(pattern, doc.scanned, doc.sentences, doc.sentence_starts):
            start, end = doc.sentences[k]
            sentence = doc.text[start:end]
            if claim_context.training_sentence(sentence) or relative_changes.training_curve(sentence):
                continue
            for m in pattern.finditer(sentence):
                for at in [relative_changes.amount_at(m), *claim_terms.further(sentence, m.end())]:
                    line = doc.line_index(start + at)
                    if line not in tool_lines and line not in taken:
                        taken.add(line)
                        out.append(Claim("sentence", start + at, sentence.strip(), bool(STAT_LABEL.search(m.group(0)))))
    return out


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
                             numbers_in(m.group("num"), doc.starts[j] + m.start("num"))))  # fmt: skip
            j += 1
    return out
