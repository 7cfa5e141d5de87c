"""D2 from a recognised KLD tool: printed llama-perplexity output (its label set or its command line) names
llama.cpp as the measurement's engine even where the card never writes "llama.cpp", and ``model_diff``
output names exllamav3 (issue 28's R8' with R7: "an engine named only by its tool"; the tool named by its
printed labels). Without a version, build or hardware that is the runtime stated in part: ``incomplete``,
never ``inferred`` (no tool's default says which build ran) and never ``missing`` (the engine is known).

"Same top p" printed alone is accepted as naming llama-perplexity for its defaults (R7, marked in the
labels) but is too weak to name the engine of the run: a column of that name is copied into other tables. A tool
the text names as of no use ("`llama-perplexity` no sirve aquí", read.tools.dismissed.negated) names no engine of
the run, as the D2 reading of the name itself (read.runtime) already holds.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import TYPE_CHECKING

from kldcard.lint.read.tools import dismissed
from kldcard.lint.read.tools import llama_perplexity as lp
from kldcard.lint.scan import Text, finditer, search

if TYPE_CHECKING:
    from kldcard.lint.tool_defaults import Tool

SAME_TOP_P = re.compile(r"Same[- ]top[- ]p\b", re.IGNORECASE)
NAME = re.compile(r"[\w.\-]+")  # the tool's name where it was recognised


def engine(tool: Tool, text: Text) -> str | None:
    """The engine a recognised tool runs in (``Tool.engine``, set where the tool is recognised), or None for
    a tool that does not fix it or is named too weakly."""
    if tool.engine is not None and tool.name.endswith("llama-perplexity") and _same_top_p_only(text):
        return None
    name = NAME.match(text.text, tool.offset)
    if name is not None and dismissed.negated(text.text, name):
        return None
    return tool.engine


def _same_top_p_only(text: Text) -> bool:
    if search(lp.STRONG, text) is not None:
        return False
    # the labels the tool printed (lp.printed_label, as tool_defaults recognises the tool by them), not words of prose
    labels = {m.group(0).lower().replace(" ", "").replace("-", "") for m in finditer(lp.LABELS, text) if lp.printed_label(m, text.text)}
    unique = [m for m in finditer(lp.UNIQUE, text) if not SAME_TOP_P.fullmatch(m.group(0)) and lp.printed_label(m, text.text)]
    return not unique and labels <= {"sametopp"}
