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

import re

I = re.IGNORECASE | re.ASCII  # ASCII: ~3x faster case-insensitive matching; the keywords are ASCII

PASTE_PREFIX = r"^(?:[ \t]*+(?:>|[-*+](?=\s))[ \t]*+)*+[ \t]*+"
STAT = re.compile(PASTE_PREFIX + r"(?:Mean|Median|Maximum|Minimum|\d{1,2}(?:\.\d+)?%)\s+KLD\s*:\s*(-?\d+\.\d+)", I)
HEADER = re.compile(PASTE_PREFIX + r"=+\s*KL[- ]divergence statistics(?:\s*=+|\s*$)", I)
OLD_STAT = re.compile(PASTE_PREFIX + r"(?:Average|Median|Minimum|Maximum|KLD_\d+)\s*:\s*(-?\d+\.\d+)", I)
# the cumulative per-chunk line: [n] (or a bare chunk number) PPL (± se since PR 6936; bare in PR 5081's
# first table), ln ratio ± se, KLD ± se, then Δp ± % or (PR 5081) same-top ± se
CHUNK = re.compile(
    r"^\s*(?:\[\d+\]|\d+(?=[ \t]))\s*\d+\.\d+(?:\s*±\s*\d+\.\d+)?\s+-?\d+\.\d+\s*±\s*\d+\.\d+\s+"
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
