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
LOG_N_CTX = lp.LOG_N_CTX
MODEL_DIFF, EXLLAMA_V2, EXLLAMA_V3, EXL3_LABELS, MODEL_DIFF_PRINTED = ex3.MODEL_DIFF, ex3.EXLLAMA_V2, ex3.EXLLAMA_V3, ex3.LABELS, ex3.PRINTED


@dataclass(frozen=True)
class Tool:
    name: str  # "llama-perplexity", "ik_llama.cpp llama-perplexity", "exllamav3 model_diff", ...
    offset: int  # where the card names it
    n_ctx: int | None = None  # a -c override found on the card
    # the engine the tool runs in, where naming the tool names it (R8': llama-perplexity is llama.cpp,
    # model_diff is exllamav3); None for tools that run on whatever the user loads (Heretic, MaxText, ...)
    engine: str | None = None
    chunks: int | None = None  # the chunk count the tool's pasted log prints (llama-perplexity)


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
        # the card's -c, else the one its pasted log prints, with the chunks that log says it scored
        log = search(LOG_N_CTX, text)
        ctx = search(CTX_OPTION, text)
        n_ctx = int(ctx.group(1)) if ctx else int(log.group("n_ctx")) if log else None
        chunks = int(log.group("chunks")) if log and n_ctx == int(log.group("n_ctx")) else None
        engine = "ik_llama.cpp" if search(IK_LLAMA, text) else "llama.cpp"
        name = "ik_llama.cpp llama-perplexity" if engine == "ik_llama.cpp" else "llama-perplexity"
        return Tool(name, m.start(), n_ctx, engine, chunks)
    m = search(MODEL_DIFF, text) or search(EXL3_LABELS, text) or search(MODEL_DIFF_PRINTED, text)
    if m is not None:
        if search(EXLLAMA_V2, text) and not search(EXLLAMA_V3, text):
            return Tool("exllamav2 model_diff", m.start(), engine="exllamav2")
        rows, length = search(ex3.ROWS_OPTION, text), search(ex3.LENGTH_OPTION, text)  # its -r / -l on the card
        return Tool("exllamav3 model_diff", m.start(), int(length.group(1)) if length else None, "exllamav3",
                    int(rows.group(1)) if rows else None)
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
            6: f"second half of each chunk, {n - 1 - n // 2} positions per {n}-token chunk"
               + (f", {tool.chunks * (n - 1 - n // 2)} in its log's {tool.chunks} chunks" if tool.chunks else ""),
            7: "forward KL(base ‖ candidate), fixed",
            8: f"full vocabulary, but the base is stored as uint16 with a {floor}-nat floor (approximate)",
            9: "token mean ± i.i.d. standard error; percentiles 0.1–99.9",
        }
    if tool.name == "exllamav3 model_diff":
        rows, length = tool.chunks or 100, tool.n_ctx or 2048
        return {
            3: "wiki2 test (Salesforce/wikitext, wikitext-2-raw-v1)",
            5: f"{rows} rows ({'its -r' if tool.chunks else 'default'}) of {length} tokens ({'its -l' if tool.n_ctx else 'default'}), "
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


def fixed_by_tool(tool: Tool, n: int, value: dict[str, object]) -> dict[str, object]:
    """What ``tool`` fixes of disclosure ``n`` whatever its options, beside the ``value`` a card states in part: the
    keys to add (none that ``value`` gives). llama-perplexity's KL mode scores non-overlapping chunks (the stride
    is the chunk length the card gives) and the second half of each (counted where its log prints the chunks);
    exllamav3's model_diff cuts its rows one after another (the stride is the row length). The other defaults are
    options a card may have changed, so they complete nothing the card states in part."""
    out: dict[str, object] = {}
    if tool.name == "exllamav3 model_diff" and n == 5 and value.get("n_ctx"):
        out = {"stride": value["n_ctx"]}  # its rows are cut one after another: the stride is the length
    if not tool.name.endswith("llama-perplexity"):
        return {k: x for k, x in out.items() if value.get(k) in (None, "")}
    if n == 5 and value.get("n_ctx"):
        out = {"stride": value["n_ctx"]}
    elif n == 6:
        out = {"scheme": "second-half"}
        if tool.chunks and tool.n_ctx:
            out["count"] = tool.chunks * (tool.n_ctx - 1 - tool.n_ctx // 2)
    return {k: x for k, x in out.items() if value.get(k) in (None, "")}


def default_values(tool: Tool) -> dict[int, dict[str, object]]:
    """Disclosure number -> the normalised value (reading.VALUE_KEYS) the tool's default implies."""
    if tool.name in BY_NAME:
        g = BY_NAME[tool.name]
        return {n: dict(v) for n, v in g.values.items()} if g.infer else {}
    if tool.name.endswith("llama-perplexity"):
        n = tool.n_ctx or 512
        return {
            5: {"n_ctx": n, "stride": n},
            6: {"scheme": "second-half", **({"count": tool.chunks * (n - 1 - n // 2)} if tool.chunks else {})},
            7: {"direction": "forward", "unit": "nats"},
            8: {"scheme": "floor", "floor": 24 if tool.name.startswith("ik_llama") else 16},
            9: {"statistic": "mean", "uncertainty": "i.i.d. standard error"},
        }
    if tool.name == "exllamav3 model_diff":
        rows, length = tool.chunks or 100, tool.n_ctx or 2048
        return {
            3: {"name": "wikitext-2-raw-v1", "source": "Salesforce/wikitext"},
            5: {"n_ctx": length, "chunks": rows, "stride": length},
            7: {"direction": "both", "unit": "nats"},
            8: {"scheme": "full"},
            9: {"statistic": "mean"},
        }
    return {5: {"n_ctx": 2048, "chunks": 20}, 7: {"direction": "forward", "unit": "nats"}, 8: {"scheme": "full"}, 9: {"statistic": "mean"}}
