"""Pasted tool output as KLD claims: llama-perplexity statistics (both formats, per-chunk rows),
exllamav3 model_diff lines, fenced result lines and the lines other tools print (kldcard.lint.read.tools)."""

from __future__ import annotations

import re

from kldcard.lint.claim_types import Claim, numbers_in
from kldcard.lint.claims_patterns import (
    CODE_RESULT,
    LIST_OR_QUOTE,
    LLAMA_CHUNK,
    LLAMA_CHUNK_HEADER,
    LLAMA_HEADER,
    LLAMA_STAT,
    MODEL_DIFF_PER_TOKEN,
    MODEL_DIFF_STAT,
    OLD_STAT,
)
from kldcard.lint.markdown import Doc
from kldcard.lint.read import training_output
from kldcard.lint.read.tools import BY_NAME as GRAMMARS
from kldcard.lint.read.tools import LINES as TOOL_LINES


def tool_output(doc: Doc) -> tuple[list[Claim], set[int]]:
    """Pasted llama-perplexity / model_diff statistics (fenced or not), and the lines they cover."""
    claims: list[Claim] = []
    lines: set[int] = set()
    current: Claim | None = None
    stat = {i: LLAMA_STAT.match(doc.lines[i]) for i in doc.lines_matching(LLAMA_STAT)}
    # A line holding none of the patterns' anchors matches none of them: it only ends a block.
    old, diffs, chunks, results, headers = (
        doc.lines_matching(p) for p in (OLD_STAT, MODEL_DIFF_STAT, LLAMA_CHUNK, CODE_RESULT, LLAMA_HEADER)
    )
    diffs = diffs | doc.lines_matching(MODEL_DIFF_PER_TOKEN)
    chunk_heads = doc.lines_matching(LLAMA_CHUNK_HEADER)
    printed: dict[int, tuple[str, re.Match[str]]] = {}  # the other tools' printed lines (read.tools)
    for name, pattern in TOOL_LINES:
        for i in doc.lines_matching(pattern):
            if i not in printed and (m := pattern.match(doc.lines[i])):
                printed[i] = (name, m)
    visit = sorted(set(stat).union(old, diffs, chunks, results, headers, chunk_heads, printed))
    old_block = False  # inside the first-format block, right under its header
    previous = header = -2
    for i in visit:
        # the current per-chunk rows come each under its own header, a blank line apart: one block
        chunking = current is not None and (current.tool == "llama-perplexity-chunks" or current.tool in _GRAMMAR_TOOLS)
        # (blank lines, an elision "..." where a paste cut rows, and the tool's own rows without a KLD do not end a run of rows)
        # (result lines of one fenced block are one paste, whatever the lines between them print: "KLD=0.08" per group)
        if i != previous + 1 and not (chunking and all(_continues(current, doc.lines[j]) for j in range(previous + 1, i))) \
                and not (current is not None and current.tool == "result-lines" and _same_fence(doc, previous, i)):
            current, old_block = None, False
        elif chunking:  # the tool's own rows between (a receipt's "top-1 agreement"): the record's, not a claim of their own
            lines.update(j for j in range(previous + 1, i) if doc.lines[j].strip() not in ("", "...", "…"))
        previous = i
        line = doc.lines[i]
        if i in chunk_heads and LLAMA_CHUNK_HEADER.match(line):
            lines.add(i)
            header = i
            continue
        old_block = old_block and i in old and bool(OLD_STAT.match(line))
        llama = stat.get(i) or (old_block and OLD_STAT.match(line))
        diff = (MODEL_DIFF_STAT.match(line) or MODEL_DIFF_PER_TOKEN.match(line)) if i in diffs else None
        chunk = LLAMA_CHUNK.match(line) if i in chunks else None
        tool_line = printed.get(i) if not (llama or diff or chunk) else None
        result = doc.code[i] and not (llama or diff or chunk or tool_line) and i in results and CODE_RESULT.match(line)
        if result and training_output.training_fence(doc, i):  # a KL penalty printed by a training run (read.training_output)
            result = None
        if llama and LIST_OR_QUOTE.match(line) and not stat.get(i - 1) and not stat.get(i + 1):
            llama = None  # a lone "- Mean KLD: 0.0188" item is prose; pasted output comes as a block
        if chunk:  # running (cumulative) KLD of the chunks so far: not labelled as a mean
            if current is None or current.tool != "llama-perplexity-chunks":
                at = header if header == i - 1 else i  # the rows' header, right above them, is where they start
                current = Claim("tool-output", doc.starts[at], doc.lines[at].strip(), labelled=False, tool="llama-perplexity-chunks")
                claims.append(current)
            current.numbers.extend(numbers_in(chunk.group("kld"), doc.starts[i] + chunk.start("kld")))
            lines.add(i)
        elif llama or diff:
            tool = "llama-perplexity" if llama else "model_diff"
            if current is None or current.tool != tool:
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=bool(llama), tool=tool)
                claims.append(current)
            colon = line.index(":", diff.end() - len(diff.group(0).split(":")[-1]) - 1) if diff else line.index(":")
            current.numbers.extend(numbers_in(line[colon + 1 :], doc.starts[i] + colon + 1))
            lines.add(i)
        elif tool_line:  # a line another tool prints, its number in the grammar's "kld" group
            name, m = tool_line
            if current is None or current.tool != name:
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=False, tool=name)
                claims.append(current)
            current.numbers.extend(numbers_in(m.group("kld"), doc.starts[i] + m.start("kld")))
            lines.add(i)
        elif result:
            if current is None or current.tool != "result-lines":
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=False, tool="result-lines")
                claims.append(current)
            current.numbers.extend(numbers_in(result.group(1), doc.starts[i] + result.start(1)))
            lines.add(i)
        elif i in headers and LLAMA_HEADER.match(line):
            lines.add(i)
            current = None
            old_block = True
        elif chunking and _continues(current, line):  # an elision, or the tool's own row without a KLD
            if line.strip() not in ("...", "…"):
                lines.add(i)
        elif not (
            current is not None and current.tool == "result-lines" and _same_fence(doc, i - 1, i)
        ):  # any other line (blank, header, Δp block) ends the block; a fence's other lines do not end its result lines
            current = None
    return claims, lines


_GRAMMAR_TOOLS = frozenset(name for name, _ in TOOL_LINES)


def _continues(current: Claim | None, line: str) -> bool:
    """Whether ``line``, between two rows of ``current``'s run, leaves the run unbroken: a blank line, an
    elision, or a row of the same tool's record that carries no KLD (its grammar's ``between``)."""
    if line.strip() in ("", "...", "…"):
        return True
    grammar = GRAMMARS.get(current.tool) if current is not None else None
    return grammar is not None and grammar.between is not None and grammar.between.match(line) is not None


def _same_fence(doc: Doc, a: int, b: int) -> bool:
    """Whether lines ``a`` < ``b`` are inside one fenced block (every line between is code and none is a fence)."""
    return doc.code[a] and all(doc.code[j] and not doc.lines[j].lstrip().startswith(("```", "~~~")) for j in range(a + 1, b + 1))
