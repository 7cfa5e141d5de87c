"""D3 matches that name a text, but not the text the KLD was scored on: the text of another number.

Cards name their corpora for every number they print; the KLD's text is the one named where the KL is.
Three ways a name is written for something else:

- a perplexity's text, the name written as the perplexity's qualifier ("wikitext-2 PPL", "wiki PPL",
  "la perplexity de wikitext-2", "perplexity over 32 × 4096 tokens of wikitext", "PPL source: WikiText2 subset", a "| WikiText2 subset PPL |" column) in a statement without a KL term (a
  statement: up to a semicolon, a dash, a table cell or the sentence's end; "wikitext-2 PPL and KL against
  BF16 are measured" keeps it). Not when the card names a perplexity tool ("llama-perplexity", "the
  perplexity tool", ``--kl-divergence``): those score the KLD on their perplexity run's text;
- a benchmark's score: "GSM8K 96.5%", "(MMLU, HumanEval, GSM8K)", "| HumanEval@1 |": a task suite named
  in a clause (:func:`kldcard.lint.read.eval_text.clause`) with no KL term; "KLD on GSM8K prompts" keeps it, and so do
  the suite's items picked by number ("MATH-500, probs 60-69", "MBPP `validation`, task IDs 511-600");
- a speed run's prompts: the name in a statement about serving speed (throughput, tok/s, "rendimiento de
  servicio") that names no KL;
- a cited page: the name in a link's host ("en.wikipedia.org"), or in the text of a link to that site
  ("Perplexity - Wikipedia" linking to wikipedia.org);
- a machine: a Hub-id-shaped name that holds a device, "measured on nix1/gfx1103" (a host and its GPU).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.hardware_names import HARDWARE
from kldcard.lint.read import command_lines, eval_text, eval_text_benchmarks

I = re.IGNORECASE

PERPLEXITY = r"(?:(?<![A-Za-z_])PPL(?![A-Za-z_])|perplexity|perplejidad|perplexité|perplexidade)"
# the name, then its split or part, then the perplexity ("wikitext-2 test PPL", "WikiText2 subset PPL")
QUALIFIER_AFTER = re.compile(r"[`'\"*]*\s*(?:[-–]\s*)?(?:(?:raw|test|validation|val|en|subset|sample|slice|split)\s+)?" + PERPLEXITY, I)
# the perplexity, then the name: "perplexity of wikitext", and with the size between ("Perplexity over 32 × 4096 tokens
# of wikitext", "PPL on 100 chunks of the C4 validation split")
QUALIFIER_BEFORE = re.compile(
    PERPLEXITY + r"\s+(?:(?:over|on|across)\s+[^.;:|\n]{1,40}?\s+(?:of|from)|de|del|of|du|da)\s+(?:the\s+|la\s+)?[`'\"*]*$|"
    # a record's label: "PPL source: WikiText2 subset", "perplexity dataset = c4"
    + PERPLEXITY + r"[ _-](?:source|text|data(?:set)?|corpus)[`'\"*]*\s*[:=]\s*[`'\"*]*$",
    I,
)
NAME_REST = re.compile(r"[\w.\-]*")
NAME_START = re.compile(r"\b(?:of|from)\s+(?:the\s+)?", I)
# a tool that scores perplexity and KLD on one run
KL_MODE = re.compile(r"--kl-divergence\b")
PERPLEXITY_TOOL = re.compile(r"[\w.]+-perplexity\b|\bperplexity\s+(?:tool|binary|script)\b|--kl-divergence", I)
# where a statement ends (wider than eval_text.clause: commas and parentheses do not end it; a table cell's
# bar does, the "||" of "KL(P || Q)" does not)
STATEMENT_END = re.compile(r"[;!?。；]|(?<!\|)\|(?!\|)|\s[—–]\s|\.(?!\d)|\n\s*\n|\n(?=[ \t]*(?:[-*+#>|]|\d+\.\s))")
REACH = 300
URL_HOST_BEFORE = re.compile(r"(?:https?://|www\.)[\w.\-]*$", I)
LINK_TO = re.compile(r"<a\s[^>]*href=[\"']?https?://([\w.\-]+)[^>]*>[^<]*$|\[[^\]\n]*$", I)


def statement(text: str, start: int, end: int) -> str:
    """The statement holding ``text[start:end]``: from the last :data:`STATEMENT_END` before it to the next."""
    lo = max(0, start - REACH)
    before = [b.end() for b in STATEMENT_END.finditer(text, lo, start)]
    after = STATEMENT_END.search(text, end, end + REACH)
    return text[(before[-1] if before else lo) : (after.start() if after else min(len(text), end + REACH))]


def perplexity_text(text: str, m: re.Match[str]) -> bool:
    """The match qualifies a perplexity in a statement without a KL term, and no perplexity tool is named."""
    # the name may start inside the match ("tokens of w", a pattern that reads the size and the name's first letter):
    # the qualifier is looked for before the name and after the name's word
    end = m.end() + len(NAME_REST.match(text, m.end()).group(0))
    starts = [m.start()] + [m.start() + k.end() for k in NAME_START.finditer(m.group(0))]
    qualifier = QUALIFIER_AFTER.match(text, end, end + 30) or any(QUALIFIER_BEFORE.search(text, max(0, s - 60), s) for s in starts)
    if not qualifier or PERPLEXITY_TOOL.search(text):
        return False
    return not eval_text.KL_TERM.search(statement(text, m.start(), m.end()))


def benchmark_score(text: str, m: re.Match[str]) -> bool:
    """The match is a task suite named in a clause without a KL term (a score, not the KLD's prompts)."""
    lo, hi = eval_text.clause(text, m.start(), m.end())
    picked = eval_text_benchmarks.items_picked(text, m)  # "MATH-500, probs 60-69": its items are the text scored
    return bool(eval_text_benchmarks.BENCHMARK.match(m.group(0).strip())) and not picked and not eval_text.KL_TERM.search(text, lo, hi)


def cited_page(text: str, m: re.Match[str]) -> bool:
    """The match is a link's host, or stands in the text of a link to a site of its name."""
    if "/" not in m.group(0) and URL_HOST_BEFORE.search(text, max(0, m.start() - 100), m.start()) and text[m.end() : m.end() + 1] == ".":
        return True
    link = LINK_TO.search(text, max(0, m.start() - 300), m.start())
    if link is None:
        return False
    host = link.group(1) or ""
    if not host:  # a Markdown link: its target follows the text ("[Perplexity - Wikipedia](https://...)")
        target = re.match(r"[^\]\n]*\]\(https?://([\w.\-]+)", text[m.end() : m.end() + 300])
        host = target.group(1) if target else ""
    return m.group(0).lower() in host.lower()


FILE_OPTION_BEFORE = re.compile(r"(?:^|\s)(?:-f|--file)\s+[`'\"]?\S*$")


def kl_run_file(text: str, m: re.Match[str]) -> bool:
    """The match is the file of a ``-f``/``--file`` option in a command line (its lines joined by backslashes)
    that runs llama-perplexity's KL mode: the KLD's text, even when its name says it was made for calibration."""
    if not FILE_OPTION_BEFORE.search(text, max(0, m.start() - 300), m.start()):
        return False
    start, end = command_lines.span(text, m.start(), m.end())
    return bool(KL_MODE.search(text, start, end))


# a line about serving speed, in the card languages
SERVING = re.compile(
    r"\b(?:throughput|serving|latency|servicio|rendimiento|velocidad|latencia|débit|vitesse|desempenho|velocidade)\b|"
    r"(?<![\w/])(?:tok(?:ens)?|t)/s\b|吞吐|スループット",
    I,
)


def serving_text(text: str, m: re.Match[str]) -> bool:
    """The match stands in a statement about serving speed that names no KL ("**Serving speed** (…, 128 prompts
    ShareGPT)"): the prompts of a speed run."""
    part = statement(text, m.start(), m.end())
    return bool(SERVING.search(part)) and not eval_text.KL_TERM.search(part)


MACHINE = re.compile(HARDWARE, re.IGNORECASE)


def machine(m: re.Match[str]) -> bool:
    """A Hub id the KL was "measured on" that names a device ("nix1/gfx1103"), not a text."""
    return m.re is eval_text.SOURCE.compiled and bool(m.group("measured")) and MACHINE.search(m.group("measured")) is not None


def other_text(text: str, m: re.Match[str]) -> bool:
    """Whether the D3 match ``m`` names the text of another number, a cited page or a machine (see the module doc)."""
    return cited_page(text, m) or benchmark_score(text, m) or perplexity_text(text, m) or serving_text(text, m) or machine(m)
