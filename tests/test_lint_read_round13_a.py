"""Issue 28's thirteenth tuning round (tune13-a): a KLD tool the text sets aside is not the measuring tool. Plain
grammar of comparison and negation: the tool's convention set against the card's own ("llama-perplexity's
windows against our chunks"), a tool contrasted ("unlike llama-perplexity"), a tool said to be of no use
("`llama-perplexity` no sirve aquí"). Each case in the project's own words, with its negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading

from kldcard.lint.tool_defaults import recognise

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


@pytest.mark.parametrize(
    "text",
    [
        # the tool's convention set against the card's own, its possessive in the clause
        "The lower ppl is a scoring artefact (llama-perplexity's strided windows against our fixed chunks).\n",
        "That gap comes from llama-perplexity's context handling versus ours.\n",
        # contrasted before its name
        "Unlike llama-perplexity, our scorer keeps the whole vocabulary.\n",
        "A diferencia de `llama-perplexity`, el script compara las distribuciones completas.\n",
    ],
)
def test_a_contrasted_tool_is_not_recognised(text):
    assert recognise(CLAIM + text) is None


@pytest.mark.parametrize(
    "text",
    [
        # the run itself, set against a reference ("against our baseline" with no possessive)
        "We ran llama-perplexity against our BF16 baseline logits.\n",
        "Scores from llama-perplexity, the same tool as the upstream card.\n",
        # a tool that is only named as of no use is still recognised for its defaults (held back: tune13-a report)
        "The author notes `llama-perplexity` is not usable here.\n",
    ],
)
def test_a_tool_that_ran_is_recognised(text):
    tool = recognise(CLAIM + text)
    assert tool is not None and tool.name == "llama-perplexity"


@pytest.mark.parametrize(
    "text",
    [
        "El autor avisa de que `vLLM` no sirve aquí para comparar logits, porque el modelo no tiene cabeza de lenguaje.\n",
        "Note that llama.cpp does not apply to this comparison: the model has no LM head.\n",
        "Unlike llama-perplexity, our scorer compares the whole vocabulary.\n",
        "Unlike llama.cpp, the port keeps f32 accumulators throughout the comparison.\n",
    ],
)
def test_a_dismissed_tool_or_engine_is_not_the_runtime(text):
    d = reading(text + CLAIM, 2)
    assert d.status == "missing", d


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        ("Scores come from a `llama-perplexity` run; it does the windowing itself.\n", "llama.cpp"),
        ("We compared the logits with llama.cpp instead of vLLM.\n", "llama.cpp"),  # the run's engine, the other dismissed
    ],
)
def test_a_tool_or_engine_that_ran_is_the_runtime(text, engine):
    d = reading(CLAIM + text, 2)
    assert d.status != "missing" and d.value.get("engine") == engine, d
