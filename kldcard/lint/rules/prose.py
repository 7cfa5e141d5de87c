"""KLD3xx rules: KLD claims in free-form cards (prose, tables, pasted tool output).

Numbering mirrors KLD1xx: KLD301–KLD309 are the nine disclosures (D1–D9, DESIGN.md's order) missing
from a card that makes a KLD claim in prose, one finding per missing disclosure per card, located at
the card's first claim. One code per disclosure (not one code with the disclosure in the message) so
that CI can ``--ignore KLD304`` where calibration is irrelevant, and a reviewer sees what is missing
from the code alone. KLD310–KLD314 are the problems a prose card can have beyond a gap.

KLD331–KLD339 (warnings) are the disclosures a claim states only in part ("incomplete" in the
reading, :mod:`kldcard.lint.reader`): KLD30n only when nothing at all was found.

Only cards without a ``kld_evaluation`` block get KLD301–KLD313 and KLD331–KLD339; a card with a block is linted
structurally (KLD1xx/KLD2xx) and its prose only checked against the block (KLD314).
"""

from __future__ import annotations

from kldcard.lint.read.complete import CAN_BE_INCOMPLETE, REQUIRED
from kldcard.lint.rule import RuleSet

RULES = RuleSet()
rule = RULES.rule

_MISSING_WHY = (
    "A KLD number is only interpretable with all nine disclosures; without the {name} two cards "
    "reporting the same number may measure different things. Of 26 public examples studied, only one "
    "disclosed all nine (shared/reference/disclosure-patterns.md)."
)
_CLAIM = "A table with a KLD column, pasted llama-perplexity/model_diff statistics, or a sentence that gives a KLD number"

MISSING = {
    1: (
        "prose-reference-missing",
        "reference checkpoint",
        "Q4_K_M: mean KLD 0.021 on wikitext-2 test.",
        "Q4_K_M: mean KLD 0.021 on wikitext-2 test, vs Qwen/Qwen3-8B@b968826d9c46dd6066d109eabc6255188de91218 (BF16).",
    ),
    2: (
        "prose-runtime-missing",
        "runtime environment",
        "Quantized with llama.cpp b4944. Mean KLD 0.021.",
        "Both sides ran on llama.cpp b4944 (CUDA, RTX 4090, -fa on, f16 KV cache). Mean KLD 0.021.",
    ),
    3: (
        "prose-eval-text-missing",
        "evaluation text",
        "Mean KLD 0.021 vs BF16.",
        "Mean KLD 0.021 vs BF16 on wikitext-2-raw-v1 test (raw text, no chat template, 287k tokens).",
    ),
    4: (
        "prose-calibration-missing",
        "calibration data",
        "Q4_K_M (imatrix): mean KLD 0.021.",
        "Q4_K_M, imatrix from calibration_datav3.txt (300k tokens, no overlap with the eval text): mean KLD 0.021.",
    ),
    5: (
        "prose-context-missing",
        "context length",
        "Mean KLD 0.021 on wikitext-2 test.",
        "Mean KLD 0.021 on wikitext-2 test, 2048-token windows, stride 2048, 140 windows.",
    ),
    6: (
        "prose-positions-missing",
        "sampled positions",
        "Mean KLD 0.021 over 2048-token windows.",
        "Mean KLD 0.021 over 2048-token windows; all positions after the first scored (286,580 positions).",
    ),
    7: (
        "prose-direction-missing",
        "KL direction",
        "Mean KLD 0.021 between BF16 and Q4_K_M.",
        "Mean KLD 0.021, forward KL(P_bf16 ‖ P_q4km) in nats.",
    ),
    8: (
        "prose-vocabulary-missing",
        "vocabulary truncation",
        "Mean KLD 0.021 from the server's logprobs.",
        "Mean KLD 0.021 over the full 151,936-token vocabulary (no top-k).",
    ),
    9: (
        "prose-aggregation-missing",
        "aggregation",
        "| Quant | KLD |\n|---|---|\n| Q4_K_M | 0.021 |",
        "| Quant | Mean KLD (token mean ± i.i.d. SE) | Median | p99 |\n|---|---|---|---|\n| Q4_K_M | 0.021 ± 0.0002 | 0.008 | 0.31 |",
    ),
}

for _n, (_name, _what, _example, _fix) in MISSING.items():
    rule(
        code=f"KLD30{_n}",
        name=_name,
        severity="error",
        summary=f"A KLD claim in the card's prose does not state the {_what} (D{_n})",
        what=(
            f"Finds KLD claims in the Markdown body ({_CLAIM}) and reports a card whose text states "
            f"nowhere the {_what} (disclosure D{_n}): nothing in the body and no front-matter key the Hub "
            "defines for it. One finding per card, at the first claim. A value implied by a named tool's "
            "documented default counts as disclosed (see KLD313); one stated in part is KLD33x."
        ),
        why=_MISSING_WHY.format(name=_what),
        example=_example,
        fix=_fix,
    )

# KLD331–KLD339: the disclosure is there but incomplete (the last digit is the disclosure, as for
# KLD30n). A warning, not an error: the card said something a reviewer can check and build on.
INCOMPLETE = {
    1: (
        "prose-reference-incomplete",
        "names google/gemma-3-12b-it as the reference, but without a pinned revision or dtype",
        "Base model: google/gemma-3-12b-it. Mean KLD 0.021 vs the original.",
        "Mean KLD 0.021 vs google/gemma-3-12b-it@96b6f1eccf38110c56df3a15bffe176da04bfd80 (BF16).",
    ),
    2: (
        "prose-runtime-incomplete",
        "names the engine (in words, or by pasting the output of its tool: a llama-perplexity KLD block names "
        "llama.cpp, a model_diff table exllamav3), or only the hardware, without the engine's version or build",
        "KLD measured with llama.cpp on an RTX 4090: mean KLD 0.021.",
        "KLD measured with llama.cpp b4944 (CUDA) on an RTX 4090: mean KLD 0.021.",
    ),
    3: (
        "prose-eval-text-incomplete",
        "names the evaluation text without its source (dataset id and revision, or URL) or sha256, or describes it "
        "without naming it (\"the same 25-window panel\", \"200 validation documents\")",
        "Mean KLD 0.021 on wiki.test.raw.",
        "Mean KLD 0.021 on wiki.test.raw (wikitext-2-raw-v1 test from Salesforce/wikitext, sha256 173c87a5…).",
    ),
    4: (
        "prose-calibration-incomplete",
        "names the calibration set without its size",
        "imatrix from calibration_datav3.txt. Mean KLD 0.021.",
        "imatrix from calibration_datav3.txt (300k tokens). Mean KLD 0.021.",
    ),
    5: (
        "prose-context-incomplete",
        "gives the context length without the number of windows (or the stride)",
        "Mean KLD 0.021, 512 tokens per chunk.",
        "Mean KLD 0.021, 512 tokens per chunk, 580 chunks (non-overlapping).",
    ),
    6: (
        "prose-positions-incomplete",
        "gives the scored positions' count without the scheme, or the scheme without the count",
        "Mean KLD 0.021 over 204,800 positions.",
        "Mean KLD 0.021 over 204,800 positions: all positions after the first of each window.",
    ),
    9: (
        "prose-aggregation-incomplete",
        "gives an uncertainty or a percentile elsewhere, but not which statistic the numbers are",
        "KLD 0.021 (bootstrap 95% CI).",
        "Mean KLD 0.021 (token mean; window bootstrap, 95% CI [0.020, 0.022]).",
    ),
}
assert set(INCOMPLETE) == set(CAN_BE_INCOMPLETE), "one KLD33n rule per disclosure that can be incomplete"

for _n, (_name, _gap, _example, _fix) in INCOMPLETE.items():
    _complete = " or ".join(" + ".join(alt) for alt in REQUIRED[_n])
    rule(
        code=f"KLD33{_n}",
        name=_name,
        severity="warning",
        summary=f"A KLD claim's {MISSING[_n][1]} (D{_n}) is stated but incomplete",
        what=(
            f"Reads every KLD claim of a card without a kld_evaluation block ({_CLAIM}) and reports one whose "
            f"{MISSING[_n][1]} the card states only in part: it {_gap}. Complete, in prose, means: {_complete}. "
            "The message says what was read, where (line and quoted text, or front-matter key such as "
            "/base_model), and what is still needed; `kldcard lint --explain` prints the whole reading. "
            "One finding per distinct reading, at the first claim it applies to."
        ),
        why=(
            f"A reader who sees what was found can finish the disclosure in one edit; calling it missing "
            f"(KLD30{_n}) would be wrong, and a partial {MISSING[_n][1]} still leaves two cards with the same "
            "number measuring possibly different things."
        ),
        example=_example,
        fix=_fix,
    )

rule(
    code="KLD310",
    name="prose-quantized-reference",
    severity="warning",
    summary="The card's KLD is measured against a quantized reference (FP8, Q8_0, 6.0bpw, ...)",
    what=(
        "Reports prose that names a quantized checkpoint as the KLD reference: 'Reference: 6.0bpw', "
        "'against the Q8_0', an FP8 baseline, 'the highest pure quant your hardware can run'."
    ),
    why=(
        "KLD against a quantized reference measures distance to a degraded target: it understates the "
        "candidate's error and cannot be compared with numbers measured against BF16."
    ),
    example="KLD is measured against the Q8_0 reference, because the BF16 weights do not fit in RAM.",
    fix="KLD is measured against the BF16 GGUF (converted from org/model@<commit>), run on CPU.",
)

rule(
    code="KLD311",
    name="prose-eval-from-calibration",
    severity="warning",
    summary="The KLD evaluation text is drawn from the calibration (imatrix/AWQ/GPTQ) data",
    what=(
        "Reports prose saying the KLD was measured on the calibration corpus, on a file generated from "
        "it, or on an evaluation set the calibration file was mixed into."
    ),
    why=(
        "A quant calibrated on the text it is evaluated on is flattered: the KLD is optimistic and "
        "not comparable with quants evaluated on held-out text."
    ),
    example="For the KLD numbers I generated the eval file from the same imatrix calibration dataset.",
    fix="KLD is measured on wikitext-2-raw-v1 test, which shares no document with the imatrix calibration set.",
)

rule(
    code="KLD312",
    name="prose-unlabelled-kld-number",
    severity="warning",
    summary="A KLD number does not say which statistic it is (mean? median? p99?)",
    what=(
        "Reports a KLD claim whose number carries no statistic label: a bare 'KLD' column, "
        "'a KLD of 0.05', 'KL-div (q→o)'. One finding per claim, at its line."
    ),
    why=(
        "Per-token KLD is heavy-tailed: the mean, median and p99 of one run differ by an order of "
        "magnitude, so an unlabelled number cannot be compared with anything."
    ),
    example="| Quant | KLD |\n|---|---|\n| Q4_K_M | 0.0228 |",
    fix="| Quant | Mean KLD | p99 KLD |\n|---|---|---|\n| Q4_K_M | 0.0228 | 0.31 |",
)

rule(
    code="KLD313",
    name="prose-inferred-tool-default",
    severity="info",
    summary="A disclosure is only implied by the named tool's default; spell it out",
    what=(
        "When a card names its tool (llama-perplexity by name, command line or printed label set; "
        "exllamav3/exllamav2 model_diff) and leaves an item unstated, the tool's documented default is "
        "taken as disclosed and reported here with its value, e.g. llama-perplexity: forward KL(base ‖ "
        "candidate), second half of each 512-token chunk (of each chunk of the claim's own length, counted over "
        "its own chunks, where the card gives them), a 16-nat floor on the stored base (24 in "
        "ik_llama.cpp), token mean ± i.i.d. SE; exllamav3 model_diff: 100 rows of 2048 tokens of wikitext-2 "
        "(its -r and -l on its command replace them), both directions printed. What a tool fixes whatever its "
        "options (llama-perplexity's non-overlapping chunks with their second half scored, model_diff's rows "
        "cut one after another) also completes an item the card states in part (\"-c 512\" has its stride, "
        "\"8 chunks\" its positions), with the tool's part as its own evidence, so no KLD33x warning asks for "
        "it. The other tools the reading recognises (Heretic, MaxText's "
        "forward_pass_logit_checker, llama_kl.py, exllamav3 eval/qbench, mlx-quant-fidelity, "
        "quant-fidelity-suite) are named in the reading, but their defaults are found in their source only "
        "and can change per run, so nothing is inferred from them. A printed output outranks a mere mention "
        "of another tool. One finding per card lists every inferred item. D1 and D4 are never inferred."
    ),
    why=(
        "Defaults change between versions and forks and are invisible to readers who do not know the "
        "tool; a card that states them stays interpretable."
    ),
    example="Q4_K_M, from `llama-perplexity --kl-divergence -f wiki.test.raw`: Mean KLD 0.0231 vs BF16.",
    fix=(
        "Q4_K_M, from `llama-perplexity --kl-divergence -f wiki.test.raw -c 512`: Mean KLD 0.0231 (token mean "
        "± i.i.d. SE), forward KL(BF16 ‖ Q4_K_M) in nats over the full vocabulary (base stored with a 16-nat "
        "floor), scored on the second half of each 512-token chunk."
    ),
)

rule(
    code="KLD314",
    name="prose-contradicts-block",
    severity="error",
    summary="A KLD number in the prose matches no value in the card's kld_evaluation results",
    what=(
        "For a card with a kld_evaluation block, checks every KLD number in its prose, tables and pasted "
        "output against the block's results: it must equal one of them within the rounding of its "
        "printed digits (0.021 matches 0.02104, not 0.0215)."
    ),
    why="When the text and the metadata disagree, at least one is wrong and readers cannot tell which.",
    example="Mean KLD 0.0250 (the kld_evaluation block says mean 0.0184)",
    fix="Mean KLD 0.0184 (regenerate the section with `kldcard render`)",
)

rule(
    code="KLD315",
    name="prose-kld-only-in-image",
    severity="warning",
    summary="A KLD section shows its numbers only in an image (chart or screenshot)",
    what=(
        "Reports a heading that names KLD whose section (up to the next heading of the same or a higher "
        "level) holds an image and no KLD number in text, a table or pasted output. Charts of another "
        "metric (perplexity, speed, size) do not count. One finding per such heading."
    ),
    why=(
        "Numbers in a picture cannot be copied, compared, searched or checked for their disclosures; a "
        "card whose KLD lives only in a chart passes every text check while telling the reader nothing exact."
    ),
    example="## KL divergence vs BF16\n\n![KLD per quant](kld.png)",
    fix=(
        "## KL divergence vs BF16\n\n![KLD per quant](kld.png)\n\n| Quant | Mean KLD |\n|---|---|\n"
        "| Q4_K_M | 0.0231 |"
    ),
)

rule(
    code="KLD320",
    name="prose-iid-interval-over-chunks",
    severity="info",
    summary="The card's interval treats tokens as independent, but the text was scored in context windows",
    what=(
        "For a card without a kld_evaluation block: reports prose that gives an i.i.d. interval (a '± SE' "
        "after a number, 'standard error', 'i.i.d.', a per-token bootstrap) while saying the text was scored "
        "in context windows (N-token chunks, `-c N`, n_ctx, the second half of each chunk), unless it names a "
        "block method (block / window bootstrap, effective sample size). One finding per card."
    ),
    why=(
        "Tokens of one window share their context and divergence comes in clusters, so an interval that "
        "counts every token as independent is too narrow, by about sqrt((1+rho)/(1-rho)) for a lag-1 "
        "correlation rho; small gaps between quantizations then look real."
    ),
    example="Mean KLD 0.0231 ± 0.0004 (SE) over 512-token chunks of wiki.test.raw.",
    fix=(
        "Mean KLD 0.0231, 95% block-bootstrap interval [0.0220, 0.0243] resampling whole 512-token windows "
        "(kldcard compare), effective sample size 9,800 of 290,000 tokens."
    ),
)
