"""llama.cpp's ``llama-perplexity --kl-divergence`` (and ik_llama.cpp's), every version's output.

- the statistics block under ``====== KL divergence statistics ======`` ("Mean    KLD:   0.041000 ±
  0.001700", "99.9%   KLD:", "Median  KLD:"), and the first (2024, PR 5076) block's "Average:" /
  "Median :" / "KLD_99 :" lines under "===== KL-divergence statistics";
- the cumulative per-chunk line of KL mode: "[12] 5.4321 ± 0.12  0.0123 ± 0.0004  0.0312 ± 0.0010 ..."
  (PR 5076 to the batching rewrite) and the current row under its "chunk  PPL  ln(PPL(Q)/PPL(base))
  KL Divergence ..." header ("  126  15.4685 ±  0.2900  0.16302 ±  0.00940  0.61048 ±  0.00686 ...");
- the labels only it prints (PPL(Q)/PPL(base), Same top p, RMS Δp, "Final estimate: PPL").

Pasted output is often quoted, indented or turned into list items ("> - Mean    KLD:   0.0146").
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE | re.ASCII  # ASCII: ~3x faster case-insensitive matching; the keywords are ASCII

PASTE_PREFIX = r"^(?:[ \t]*+(?:>|[-*+](?=\s))[ \t]*+)*+[ \t]*+"
STAT = re.compile(PASTE_PREFIX + r"(?:Mean|Median|Maximum|Minimum|\d{1,2}(?:\.\d+)?%)\s+KLD\s*:\s*(-?\d+\.\d+)", I)
HEADER = re.compile(PASTE_PREFIX + r"=+\s*KL[- ]divergence statistics(?:\s*=+|\s*$)", I)
OLD_STAT = re.compile(PASTE_PREFIX + r"(?:Average|Median|Minimum|Maximum|KLD_\d+)\s*:\s*(-?\d+\.\d+)", I)
# the cumulative per-chunk line: [n] (or a bare chunk number) PPL (± se since PR 6936; bare in PR 5081's
# first table), ln ratio ± se, KLD ± se, then Δp ± % or (PR 5081) same-top ± se
# (the first row may follow the progress line on the same line, "kl_divergence: 7.82 seconds per pass - ETA    1
# 13.9554 ± ...": the tool prints "ETA" as an info-level log line with no newline and the rows on the output stream, so
# a paste of both streams glues them, the log's timestamp and level before it or not; real-holdout-18/b llamacpp_pr23492.
# kldcard.llamacpp.log reads the same line: the two layers cannot share a module, so its test pastes the same sample)
ETA = r"(?:(?:\d+\.\d+\.\d+\.\d+[ \t]+[IWE][ \t]+)?[a-z_]{1,30}:[ \t]+\d+\.\d+[ \t]+seconds per pass - ETA(?:[ \t]+\d+[ \t]+hours)?(?:[ \t]+\d+\.\d+[ \t]+minutes)?)?"
CHUNK = re.compile(
    r"^" + ETA + r"\s*(?:\[\d+\]|\d+(?=[ \t]))\s*\d+\.\d+(?:\s*±\s*\d+\.\d+)?\s+-?\d+\.\d+\s*±\s*\d+\.\d+\s+"
    r"(?P<kld>-?\d+\.\d+\s*±\s*\d+\.\d+)\s+-?\d+\.\d+\s*±"
)
# the per-chunk rows' header ("KL-Divergence ... Same top" in PR 5081, "KL Divergence ... Same top p" since),
# printed once above the rows, or (since the batching rewrite) above every row
CHUNK_HEADER = re.compile(r"^\s*chunk\s+PPL\s+ln\(PPL\(Q\)/PPL\(base\)\)\s+KL[- ]Divergence\b", I)

# naming the tool
STRONG = re.compile(
    r"llama-perplexity|\bperplexity\b[^\n]{0,80}--kl-divergence|--kl-divergence|"
    r"(?<!=)=+\s*KL divergence statistics|perplexity tool in KL[- ]divergence mode",
    I,
)
# its label set; two distinct ones identify pasted or tabulated output
LABELS = re.compile(r"PPL\(base\)|Same[- ]top[- ]p|RMS Δp|Mean\s+KLD\s*:|Cor\(ln\(PPL\(Q\)\)", I)
# labels only it prints: one alone names the tool (real cards tabulate one or two of its columns)
UNIQUE = re.compile(r"PPL\(Q\)\s*/\s*PPL\(base\)|Same[- ]top[- ]p\b|RMS Δp|Final estimate: PPL", I)
IK_LLAMA = re.compile(r"\bik_llama(?:\.cpp)?\b", I)
# its context option, on a line that is not a serving command ("llama-server ... -c 65536 -np 1", "-c 65536
# -ctk q8_0 -ctv q8_0 -np 1": the deployment's context, not the measurement's)
SERVING = r"llama-server|llama-cli|\bserve\b|--port\b|--host\b|\s-np\s|--parallel\b|\s-ctk\s|--cache-type-k\b"
CTX_OPTION = re.compile(r"^(?![^\n]*(?:" + SERVING + r"))[^\n]*?(?<!\S)(?:-c|--ctx-size)\s+(\d{2,6})\b", re.M)
# its own output on the card (a statistics block, a "Mean KLD:" line, a label only it prints): then its
# defaults apply even where another tool's output is pasted too
PRINTED = re.compile(r"=+\s*KL[- ]divergence statistics|^[ \t>*+-]*Mean\s+KLD\s*:|" + UNIQUE.pattern, I | re.MULTILINE)

# Labels people also write as plain words ("Same top p 85.94%" in a bullet, "~2.1x its RMS Δp" in a sentence,
# "KL divergence + same top-p vs BF16" as a heading): one of them names the tool only where it is printed as
# the tool prints it, a column of a table, "Same top p: 97.6 ± 0.4 %", or beside another of its statistics
# with a value on the same line ("Mean KLD 0.0145, Same top p 94.0%", "mean KLD ..., same-top-p 98.755 %").
WEAK = re.compile(r"Same[- ]top[- ]p|RMS Δp", I)
_CELL = re.compile(r"^[\s*_«»\"'`]*(?:" + WEAK.pattern + r")[\s*_«»\"'`]*(?:\([^)|]*\)|%|<[^|]*)?[\s*_«»\"'`¹²]*$", I)
_CELLS = re.compile(r"[^|^]+")
_COLON_VALUE = re.compile(r"\s*:\s*-?\d")
_STAT_WITH_VALUE = re.compile(
    r"\b(?:mean|median|max(?:imum)?|min(?:imum)?|\d{1,2}(?:\.\d+)?\s*%)\s+KLD\s*[:=]?\s*-?\d", I
)
# a line of code that reads the tool's output (a sed/grep/awk pattern, a regular expression): the label
# there is what the script looks for, not output printed on the card
PARSING = re.compile(r"\bsed\b|\bgrep\b|\bawk\b|\bre\.\w+\(|\bstartswith\(|\bs/\^|\\\(", I)


def printed_label(m: re.Match[str], text: str) -> bool:
    """Whether the label ``m`` (a LABELS or UNIQUE match in ``text``) is the tool's printed output."""
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = text[start : end if end >= 0 else len(text)]
    if PARSING.search(line):
        return False
    if not WEAK.fullmatch(m.group(0)):
        return True
    # a table row (pipes, or the "^" of mirrors that garble them): the label is a whole cell (a column
    # header or a transposed row), not words in a cell
    at = m.start() - start
    cells = [(c.start(), c.end()) for c in _CELLS.finditer(line)]
    if len(cells) > 1 and any(a <= at < b and _CELL.match(line[a:b]) for a, b in cells):
        return True
    return bool(_COLON_VALUE.match(text, m.end()) or _STAT_WITH_VALUE.search(line))
