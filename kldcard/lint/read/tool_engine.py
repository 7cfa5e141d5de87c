"""D2 from a recognised KLD tool: printed llama-perplexity output (its label set or its command line) names
llama.cpp as the measurement's engine even where the card never writes "llama.cpp", and ``model_diff``
output names exllamav3 (issue 28's R8' with R7: "an engine named only by its tool"; the tool named by its
printed labels). Without a version, build or hardware that is the runtime stated in part: ``incomplete``,
never ``inferred`` (no tool's default says which build ran) and never ``missing`` (the engine is known).

"Same top p" printed alone is accepted as naming llama-perplexity for its defaults (R7, marked in the
labels) but is too weak to name the engine of the run: a column of that name is copied into other tables.
"""

from __future__ import annotations

import re

from kldcard.lint.read.tools import llama_perplexity as lp
from kldcard.lint.scan import Text, finditer, search

# kldcard.lint.tool_defaults.Tool.name -> the engine (kldcard.lint.read.engine_names' canonical name)
TOOL_ENGINES = {
    "llama-perplexity": "llama.cpp",
    "ik_llama.cpp llama-perplexity": "ik_llama.cpp",
    "exllamav3 model_diff": "exllamav3",
    "exllamav2 model_diff": "exllamav2",
}
SAME_TOP_P = re.compile(r"Same[- ]top[- ]p\b", re.IGNORECASE)


def engine(tool_name: str, text: Text) -> str | None:
    """The engine a recognised tool runs in, or None for a tool that does not fix it (or is named too weakly)."""
    name = TOOL_ENGINES.get(tool_name)
    if name is not None and tool_name.endswith("llama-perplexity") and _same_top_p_only(text):
        return None
    return name


def _same_top_p_only(text: Text) -> bool:
    if search(lp.STRONG, text) is not None:
        return False
    labels = {m.group(0).lower().replace(" ", "").replace("-", "") for m in finditer(lp.LABELS, text)}
    unique = [m for m in finditer(lp.UNIQUE, text) if not SAME_TOP_P.fullmatch(m.group(0))]
    return not unique and labels <= {"sametopp"}
