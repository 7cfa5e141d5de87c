"""Which KLD tool a card names, and what that tool's documented defaults imply.

Source: shared/reference/disclosure-patterns.md §4 and llamacpp-kld.md §3–7; for the other tools,
the sources cited in their grammar modules (kldcard.lint.read.tools). A default is inferred only
when the card names the tool (a command line, pasted output or the tool's label set) and does not
state the item itself. D1 (reference) and D4 (calibration) are never inferred: no tool fixes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kldcard.lint.read.tools import GRAMMARS, BY_NAME
from kldcard.lint.read.tools import exllamav3 as ex3
from kldcard.lint.read.tools import llama_perplexity as lp
from kldcard.lint.read.tools.dismissed import set_aside
from kldcard.lint.scan import Text, finditer, search

# the tools' own words: one grammar per tool (kldcard.lint.read.tools)
LLAMA_STRONG, LLAMA_LABELS, LLAMA_UNIQUE, IK_LLAMA, CTX_OPTION = lp.STRONG, lp.LABELS, lp.UNIQUE, lp.IK_LLAMA, lp.CTX_OPTION
MODEL_DIFF, EXLLAMA_V2, EXLLAMA_V3, EXL3_LABELS, MODEL_DIFF_PRINTED = ex3.MODEL_DIFF, ex3.EXLLAMA_V2, ex3.EXLLAMA_V3, ex3.LABELS, ex3.PRINTED


@dataclass(frozen=True)
class Tool:
    name: str  # "llama-perplexity", "ik_llama.cpp llama-perplexity", "exllamav3 model_diff", ...
    offset: int  # where the card names it
    n_ctx: int | None = None  # a window length found on the card: llama-perplexity's -c, model_diff's -l
    # the engine the tool runs in, where naming the tool names it (R8': llama-perplexity is llama.cpp,
    # model_diff is exllamav3); None for tools that run on whatever the user loads (Heretic, MaxText, ...)
    engine: str | None = None
    rows: int | None = None  # a -r override of model_diff's row count found on the card


def recognise(body: str | Text) -> Tool | None:
    """The KLD tool the card names, or None."""
    text = body if isinstance(body, Text) else Text(body)
    # another tool's printed output outranks a mention of llama-perplexity ("checked against the new
    # --kl-divergence mode" above pasted llama_kl.py output), not llama-perplexity's own printed labels
    printed = _grammar(text, "printed")
    if printed is not None and search(lp.PRINTED, text) is None:
        return printed
    # its name, where the text does not set it aside (the former or removed setup, the other side of a contrast:
    # read.tools.dismissed); its KL options and printed header are the measurement itself whatever the sentence
    # says. (A tool said to be of no use, "no sirve aquí", read.tools.dismissed.negated, is vetoed for D2 only so
    # far: the one labelled card that says so states its D6 and D8 in forms not read yet, for which the tool's
    # defaults now stand in; vetoing the defaults too waits on reading those.)
    m = next((x for x in finditer(LLAMA_STRONG, text)
              if "kl" in x.group(0).lower() or not set_aside(text.text, x)), None)
    if m is None:
        # its labels count only as printed (a column, "Label: value", pasted output), not as words of
        # prose or a pattern a script greps for (lp.printed_label)
        labels = [x for x in finditer(LLAMA_LABELS, text) if lp.printed_label(x, text.text)]
        if len({x.group(0).lower().replace(" ", "") for x in labels}) >= 2:
            m = labels[0]
        else:
            m = next((x for x in finditer(LLAMA_UNIQUE, text) if lp.printed_label(x, text.text)), None)
    if m is not None:
        ctx = search(CTX_OPTION, text)
        engine = "ik_llama.cpp" if search(IK_LLAMA, text) else "llama.cpp"
        name = "ik_llama.cpp llama-perplexity" if engine == "ik_llama.cpp" else "llama-perplexity"
        return Tool(name, m.start(), int(ctx.group(1)) if ctx else None, engine)
    m = search(MODEL_DIFF, text) or search(EXL3_LABELS, text) or search(MODEL_DIFF_PRINTED, text)
    if m is not None:
        if search(EXLLAMA_V2, text) and not search(EXLLAMA_V3, text):
            return Tool("exllamav2 model_diff", m.start(), engine="exllamav2")
        rows, length = ex3.option(text.text, ex3.ROWS_OPTION), ex3.option(text.text, ex3.LENGTH_OPTION)  # its -r / -l on the card
        return Tool("exllamav3 model_diff", m.start(), length, "exllamav3", rows)
    # the other tools with documented defaults (kldcard.lint.read.tools): their printed output first,
    # then a name precise enough to be that tool (its command or package, not a word of prose)
    return printed or _grammar(text, "names")


def _grammar(text: Text, kind: str) -> Tool | None:
    """The first tool with documented defaults (read.tools.GRAMMARS) whose ``kind`` pattern the card holds."""
    for g in GRAMMARS:
        p = getattr(g, kind)
        if g.defaults and p is not None and (m := search(p, text)) is not None:
            return Tool(g.name, m.start())
    return None


def defaults(tool: Tool) -> dict[int, str]:
    """Disclosure number -> the value the tool's default implies, in words."""
    if tool.name in BY_NAME:
        g = BY_NAME[tool.name]
        return dict(g.defaults) if g.infer else {}
    if tool.name.endswith("llama-perplexity"):
        n = tool.n_ctx or 512
        floor = 24 if tool.name.startswith("ik_llama") else 16
        return {
            5: f"-c {n}: non-overlapping {n}-token chunks" + ("" if tool.n_ctx else " (default)"),
            6: f"second half of each chunk, {second_half(n)} positions per {n}-token chunk",
            7: "forward KL(base ‖ candidate), fixed",
            8: f"full vocabulary, but the base is stored as uint16 with a {floor}-nat floor (approximate)",
            9: "token mean ± i.i.d. standard error; percentiles 0.1–99.9",
        }
    if tool.name == "exllamav3 model_diff":
        rows, length = tool.rows or 100, tool.n_ctx or 2048
        return {
            3: "wiki2 test (Salesforce/wikitext, wikitext-2-raw-v1)",
            5: f"{rows} rows ({'its -r' if tool.rows else 'default'}) of {length} tokens ({'its -l' if tool.n_ctx else 'default'}), "
               "stride = length",
            7: "both KL(A,B) and KL(B,A) are printed; KL(A,B) treats B as the reference",
            8: "full vocabulary in fp32, cut to the smaller of the two vocabularies",
            9: "mean of per-row means; median and p90 of KL(A,B)",
        }
    return {  # exllamav2 model_diff
        5: "20 rows of 2048 tokens",
        7: "one value, KL(P_B ‖ P_A): model B is the reference",
        8: "full vocabulary",
        9: "mean over rows",
    }


def second_half(n_ctx: int) -> int:
    """Positions llama-perplexity scores in an ``n_ctx``-token chunk: from n_ctx/2 to the next-to-last."""
    return n_ctx - 1 - n_ctx // 2


def fixed_by_tool(tool: Tool, n: int, value: dict[str, object], context: dict[str, object]) -> tuple[dict[str, object], str]:
    """What ``tool`` fixes of disclosure ``n`` whatever its options, beside the ``value`` a card states in part, and
    that fact in words: the keys to add (none that ``value`` gives). ``context`` is the same claim's D5 reading.
    llama-perplexity's KL mode cuts non-overlapping chunks (the stride is the chunk length the card gives) and
    scores the second half of each (counted where the claim's own reading gives its chunks and their length);
    exllamav3 model_diff cuts its rows one after another (the stride is the row length). The other defaults are
    options a card may have changed, so they complete nothing the card states in part."""
    out: dict[str, object] = {}
    words = ""
    if n == 5 and value.get("n_ctx") and (tool.name.endswith("llama-perplexity") or tool.name == "exllamav3 model_diff"):
        out = {"stride": value["n_ctx"]}
        unit = "rows" if tool.name == "exllamav3 model_diff" else "chunks"
        words = f"{unit} cut one after another, never overlapping (stride = their length), whatever its options"
    elif n == 6 and tool.name.endswith("llama-perplexity") and value.get("scheme") in (None, "", "second-half"):
        # (a scheme of the card's own, "every position after the first 256", is the card's word: nothing to count)
        out = {"scheme": "second-half"}
        chunks, n_ctx = context.get("chunks"), context.get("n_ctx")
        counted = ""
        if isinstance(n_ctx, int) and n_ctx >= 2:
            counted = f"{second_half(n_ctx)} of each {n_ctx}-token chunk"
            if isinstance(chunks, int):
                out["count"] = chunks * second_half(n_ctx)
                counted += f", {out['count']} over {chunks} chunks"
        words = "the second half of each chunk scored" + (f" ({counted})" if counted else "") + ", whatever its options"
    out = {k: x for k, x in out.items() if value.get(k) in (None, "")}
    return (out, words) if out else ({}, "")


def default_values(tool: Tool) -> dict[int, dict[str, object]]:
    """Disclosure number -> the normalised value (reading.VALUE_KEYS) the tool's default implies."""
    if tool.name in BY_NAME:
        g = BY_NAME[tool.name]
        return {n: dict(v) for n, v in g.values.items()} if g.infer else {}
    if tool.name.endswith("llama-perplexity"):
        n = tool.n_ctx or 512
        return {
            5: {"n_ctx": n, "stride": n},
            6: {"scheme": "second-half"},
            7: {"direction": "forward", "unit": "nats"},
            8: {"scheme": "floor", "floor": 24 if tool.name.startswith("ik_llama") else 16},
            9: {"statistic": "mean", "uncertainty": "i.i.d. standard error"},
        }
    if tool.name == "exllamav3 model_diff":
        rows, length = tool.rows or 100, tool.n_ctx or 2048
        return {
            3: {"name": "wikitext-2-raw-v1", "source": "Salesforce/wikitext"},
            5: {"n_ctx": length, "chunks": rows, "stride": length},
            7: {"direction": "both", "unit": "nats"},
            8: {"scheme": "full"},
            9: {"statistic": "mean"},
        }
    return {5: {"n_ctx": 2048, "chunks": 20}, 7: {"direction": "forward", "unit": "nats"}, 8: {"scheme": "full"}, 9: {"statistic": "mean"}}
