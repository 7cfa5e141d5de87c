"""KLD0xx, KLD1xx and KLD2xx rules: the structured ``kld_evaluation`` block and ``model-index``.

Importing this module registers the rules. Codes are never reused: retire a rule by leaving its
code unassigned, never by giving it to another check.
"""

from __future__ import annotations

from kldcard.lint.rule import RuleSet
from kldcard.schema_rules import DISCLOSURES

RULES = RuleSet()
rule = RULES.rule

# --------------------------------------------------------------------------------------------
# KLD0xx: card structure and front matter
# --------------------------------------------------------------------------------------------

BLOCK_NOT_MAPPING = rule(
    code="KLD001",
    name="block-not-mapping",
    severity="error",
    summary="kld_evaluation is not a YAML mapping",
    what="Checks that the `kld_evaluation` front-matter key holds a mapping (key: value pairs).",
    why="The disclosures are fields of that mapping. A string, list or number cannot carry them, so "
    "nothing in the block can be checked and every KLD number on the card is uninterpretable.",
    example="kld_evaluation: see the evaluation section below\n",
    fix="kld_evaluation:\n  schema_version: 1\n  reference:\n    model: meta-llama/Llama-3.1-8B\n    # ...\n",
)

UNKNOWN_KEY = rule(
    code="KLD002",
    name="unknown-key",
    severity="error",
    summary="unknown key in the kld_evaluation block (typo?)",
    what="Flags keys the disclosure schema does not define (except inside `runtime`, which allows extra "
    "stack details).",
    why="An unknown key is almost always a typo of a real one (`revison` for `revision`); the value the "
    "author meant to disclose is then silently missing.",
    example="kld_evaluation:\n  reference:\n    model: meta-llama/Llama-3.1-8B\n"
    "    revison: 0e9e39f249a16976918f6564b8830bc894c89659\n",
    fix="kld_evaluation:\n  reference:\n    model: meta-llama/Llama-3.1-8B\n"
    "    revision: 0e9e39f249a16976918f6564b8830bc894c89659\n",
)

UNSUPPORTED_SCHEMA_VERSION = rule(
    code="KLD003",
    name="unsupported-schema-version",
    severity="error",
    summary="kld_evaluation.schema_version is not supported",
    what="Checks that `schema_version` is a version this kldcard understands (currently `1`).",
    why="Fields change meaning between schema versions; checking a block against the wrong version "
    "would report wrong findings or miss real ones.",
    example="kld_evaluation:\n  schema_version: 2\n",
    fix="kld_evaluation:\n  schema_version: 1\n",
)

METRIC_VALUE_NOT_FLOAT = rule(
    code="KLD004",
    name="metric-value-not-float",
    severity="error",
    summary="a model-index KLD metric value is not a number",
    what="Checks that every `model-index` metric whose type starts with `kl_divergence` has a numeric "
    "`value`.",
    why="PyYAML (YAML 1.1) reads `1e-3` as the *string* `'1e-3'`, while the Hub's YAML 1.2 parser reads "
    "a number: Python tools and the Hub then disagree about the card. Quoted numbers are strings everywhere.",
    example="model-index:\n- name: Llama-3.1-8B-Q4_K_M\n  results:\n  - metrics:\n"
    "    - type: kl_divergence\n      value: 2e-2\n",
    fix="model-index:\n- name: Llama-3.1-8B-Q4_K_M\n  results:\n  - metrics:\n"
    "    - type: kl_divergence\n      value: 0.0213\n",
)

UNBALANCED_SECTION_MARKERS = rule(
    code="KLD005",
    name="unbalanced-section-markers",
    severity="error",
    summary="duplicate or unbalanced kldcard section markers",
    what="Checks that the body has at most one `<!-- kldcard:start -->` … `<!-- kldcard:end -->` region, "
    "with the start before the end.",
    why="kldcard regenerates the text between the markers. With a marker missing or repeated it cannot "
    "tell which text it owns, and regenerating could overwrite the author's own writing.",
    example="<!-- kldcard:start schema=1 -->\n## KL divergence\n...\n",
    fix="<!-- kldcard:start schema=1 -->\n## KL divergence\n...\n<!-- kldcard:end -->\n",
)

CANDIDATE_WITHOUT_RESULTS = rule(
    code="KLD006",
    name="candidate-without-results",
    severity="error",
    summary="a candidate has no results",
    what="Checks that every entry of `candidates` carries a `results` mapping.",
    why="A candidate listed without numbers suggests a measurement that was made but not shown, or "
    "numbers that live elsewhere on the card without the block's disclosures attached to them.",
    example="  candidates:\n  - name: Q4_K_M\n    model: {...}\n    runtime: {...}\n    calibration: {none: true}\n",
    fix="  candidates:\n  - name: Q4_K_M\n    # ...\n    results:\n      n_positions: 286720\n"
    "      kld: {mean: 0.0213, se: 0.00021}\n      top1_agreement: 0.9351\n",
)

INVALID_VALUE = rule(
    code="KLD007",
    name="invalid-value",
    severity="error",
    summary="a value outside the nine disclosures is missing or has the wrong type",
    what="Checks the parts of the block that are not one of the nine disclosures: the list of "
    "`candidates`, each candidate's `name` and `model`, and the numbers in `results`.",
    why="A result that is a string, out of range or missing cannot be compared with anything; "
    "`mean: 1e-3` is a string in YAML 1.1 and silently breaks every consumer of the card.",
    example="      kld:\n        mean: 2e-2\n",
    fix="      kld:\n        mean: 0.02\n",
)

MODEL_INDEX_WITHOUT_BLOCK = rule(
    code="KLD008",
    name="model-index-without-block",
    severity="error",
    summary="model-index reports a KLD metric but the card has no kld_evaluation block",
    what="Flags a `model-index` metric of type `kl_divergence*` on a card without a `kld_evaluation` "
    "block.",
    why="The Hub shows the model-index number on the model page; without the block nobody can tell "
    "against which reference, on which text, at which positions or in which direction it was measured.",
    example="model-index:\n- name: Llama-3.1-8B-Q4_K_M\n  results:\n  - metrics:\n"
    "    - type: kl_divergence\n      value: 0.0213\n",
    fix="kld_evaluation:\n  schema_version: 1\n  reference: {...}\n  # ... all nine disclosures\n"
    "model-index:\n- name: Llama-3.1-8B-Q4_K_M\n  # ...\n",
)

SIDECAR_MISSING = rule(
    code="KLD011",
    name="sidecar-missing",
    severity="warning",
    summary="kld_evaluation names a sidecar file that is not next to the card",
    what="For a card whose `kld_evaluation.sidecar.file` is set, checks that the file exists next to the "
    "card: beside a local file, or, for `kldcard lint hf://OWNER/NAME[@REV]`, in the repository at the "
    "commit the card was read at (fetched through the Hugging Face cache; a file the Hub said was missing "
    "is remembered there). Offline with the file not cached, the lint stops with an error: nobody can tell.",
    why="A compact card writes the shared stack once and every candidate's full fingerprint to the "
    "sidecar; without the file a reader cannot see the full provenance the card points to.",
    example="kld_evaluation:\n  sidecar: {file: kld_evaluation.json, sha256: 3f5a...}\n# and no kld_evaluation.json in the repo\n",
    fix="# upload kld_evaluation.json with the card (kldcard evaluate --push does it in one commit)\n",
)

SIDECAR_MISMATCH = rule(
    code="KLD012",
    name="sidecar-mismatch",
    severity="error",
    summary="the sidecar file next to the card does not have the sha256 the card records",
    what="Hashes the sidecar file named by `kld_evaluation.sidecar.file` (next to a local card, or in a Hub "
    "card's repository at the card's commit) and compares it with `kld_evaluation.sidecar.sha256`.",
    why="The sidecar holds the full fingerprints of the numbers on the card; a file with another hash "
    "belongs to another run (or was edited), so the card's numbers no longer have their provenance.",
    example="kld_evaluation:\n  sidecar: {file: kld_evaluation.json, sha256: 3f5a...}   # the file hashes to 9b21...\n",
    fix="# rerun kldcard evaluate (it writes the card and its sidecar together)\n",
)

# --------------------------------------------------------------------------------------------
# KLD1xx: one rule per disclosure, DESIGN.md's table order (code = 100 + disclosure number)
# --------------------------------------------------------------------------------------------

_DISCLOSURE_DOCS: dict[int, tuple[str, str, str, str]] = {
    # n: (what is required, why it matters, example, fix)
    1: (
        "`reference.model`, a pin (`revision`, a 40-hex commit, or `sha256`), `reference.dtype`.",
        "A KLD is relative to its reference. `main` moves, and a number against an unknown or "
        "quantized reference says nothing about the candidate.",
        "  reference:\n    model: meta-llama/Llama-3.1-8B\n    revision: main\n",
        "  reference:\n    model: meta-llama/Llama-3.1-8B\n"
        "    revision: 0e9e39f249a16976918f6564b8830bc894c89659\n    dtype: bf16\n",
    ),
    2: (
        "a `runtime` stack fingerprint for the reference and every candidate: engine and version, "
        "backend, device, attention backend, dtypes of weights and KV cache, prefill chunk, threads, OS "
        "(and SM count, compute capability, driver and CUDA version on CUDA/ROCm).",
        "Logits differ between engines, kernels, devices and batch sizes. Without the stack, a KLD mixes "
        "the quantization error with the difference between two runtimes.",
        "    runtime:\n      engine: llama.cpp\n",
        "    runtime:\n      engine: llama.cpp\n      engine_version: b4500\n      backend: cpu\n"
        "      device: AMD EPYC 7763\n      attention_backend: flash-attn off\n      weights_dtype: q4_k_m\n"
        "      kv_cache_dtype: f16\n      prefill_chunk: 512\n      threads: 16\n      os: Linux 6.8\n",
    ),
    3: (
        "`evaluation_text`: name, source (dataset + split + revision, or URL), sha256 of the exact text, "
        "token count, whether a chat template was applied, BOS handling and the tokenizer-parity result.",
        "KLD depends strongly on the text: code, chat and encyclopedic prose give very different numbers. "
        "Without the exact text nobody can reproduce or compare the number.",
        "  evaluation_text:\n    name: wikitext\n",
        "  evaluation_text:\n    name: WikiText-2 (raw, test)\n    source: {dataset: Salesforce/wikitext, "
        "config: wikitext-2-raw-v1, split: test, revision: <40-hex>}\n    sha256: <64-hex>\n"
        "    n_tokens: 287440\n    chat_template: false\n    bos: chunk-start-overwrite\n"
        "    tokenizer_parity: {engines: [transformers, llama.cpp], tokens_checked: 287440, outcome: identical}\n",
    ),
    4: (
        "per candidate `calibration`: dataset, sha256, token count and whether it overlaps the "
        "evaluation text, or an explicit `none: true`.",
        "Quantizations calibrated on the evaluation text score better on it than anywhere else; the "
        "reader must know whether that happened.",
        "    calibration:\n      dataset: wikitext\n",
        "    calibration:\n      dataset: bartowski/calibration_datav3\n      sha256: <64-hex>\n"
        "      n_tokens: 120000\n      overlaps_evaluation_text: false\n",
    ),
    5: (
        "`context`: `n_ctx` per sequence/chunk, `n_chunks`, `stride`, `prefill_chunk`.",
        "Per-token KLD grows with position; a number at 512 tokens of context is not comparable with one "
        "at 8192.",
        "  context:\n    n_ctx: 512\n",
        "  context:\n    n_ctx: 512\n    n_chunks: 560\n    stride: 512\n    prefill_chunk: 512\n",
    ),
    6: (
        "`positions`: the scheme (all, every-n, second-half, explicit, llama-perplexity) with its "
        "parameters and `n_scored`.",
        "Early positions have little context and large divergences; which positions were scored changes "
        "the mean by a large factor.",
        "  positions:\n    scheme: every-n\n",
        "  positions:\n    scheme: every-n\n    every_n: 4\n    offset: 0\n    n_scored: 71680\n",
    ),
    7: (
        "`direction.reported` (forward = KL(P_ref ‖ P_cand), reverse, js) and `log_base: e` (nats).",
        "Forward and reverse KL differ, and bits differ from nats by a factor of ln 2; an unlabelled "
        "number can be off by either.",
        "  direction:\n    reported: [forward]\n",
        "  direction:\n    reported: [forward]\n    log_base: e\n",
    ),
    8: (
        "`vocabulary`: truncation (full, top-k with its tail treatment, or floor), vocab sizes on both "
        "sides and how they were aligned.",
        "A top-k or floored sum drops the tail where quantization error hides and understates the KLD; "
        "padded vocabularies must be aligned explicitly.",
        "  vocabulary:\n    truncation: top-k\n",
        "  vocabulary:\n    truncation: full\n    reference_vocab_size: 128256\n"
        "    candidate_vocab_size: 128256\n    alignment: identical\n",
    ),
    9: (
        "`aggregation`: statistic (token-mean, sequence-mean, median), percentiles, output ranges and the "
        "uncertainty method (bootstrap level, resamples and seed, or SE).",
        "A token mean and a sequence mean of the same data differ; a number without its uncertainty "
        "cannot tell two quantizations apart.",
        "  aggregation:\n    statistic: token-mean\n",
        "  aggregation:\n    statistic: token-mean\n    percentiles: [99.9, 99, 90]\n"
        "    output_ranges: [[0, 128], [128, 512]]\n    uncertainty: {method: se-iid}\n",
    ),
}

DISCLOSURE_RULES = {}
for _n, (_title, _key) in DISCLOSURES.items():
    _need, _why, _example, _fix = _DISCLOSURE_DOCS[_n]
    DISCLOSURE_RULES[_n] = rule(
        code=f"KLD{100 + _n}",
        name=f"missing-{_title.lower().replace(' ', '-')}",
        severity="error",
        summary=f"disclosure {_n} ({_title}) is missing or incomplete",
        what=f"Checks that the `kld_evaluation` block discloses the {_title}: {_need}",
        why=_why,
        example=_example,
        fix=_fix,
    )

# --------------------------------------------------------------------------------------------
# KLD2xx: consistency
# --------------------------------------------------------------------------------------------

NEGATIVE_MEAN_KLD = rule(
    code="KLD201",
    name="negative-mean-kld",
    severity="error",
    summary="a reported mean KL divergence is negative or NaN",
    what="Flags a negative or NaN (`.nan`) `mean` of `results.kld`, `results.reverse_kld`, `results.js`, a "
    "range's `kld_mean` or a `model-index` `kl_divergence*` value. An infinite mean is not flagged: a "
    "candidate that gives a reference token probability 0 (after top-k truncation, say) has one.",
    why="KL divergence and Jensen-Shannon divergence are never negative and always defined. A negative "
    "mean comes from a sign error, a log-probability/probability mix-up or averaging a difference of "
    "cross-entropies; a NaN from 0·log 0 evaluated as NaN or an overflow upstream. The other numbers "
    "from the same pipeline are then suspect too.",
    example="      kld:\n        mean: -0.0031\n",
    fix="      kld:\n        mean: 0.0031\n",
)

QUANTIZED_REFERENCE = rule(
    code="KLD202",
    name="quantized-reference",
    severity="warning",
    summary="the reference checkpoint is quantized (not BF16/F16/F32)",
    what="Flags a `reference.dtype` other than bf16, f16 or f32.",
    why="KLD against a quantized reference measures the distance between two approximations; readers "
    "who see \"KLD vs reference\" assume the original weights.",
    example="  reference:\n    dtype: q8_0\n",
    fix="  reference:\n    dtype: bf16\n",
)

POSITIONS_BEYOND_CONTEXT = rule(
    code="KLD203",
    name="positions-beyond-context",
    severity="error",
    summary="sampled positions lie beyond the context length",
    what="Flags scored positions or output ranges past `context.n_ctx` (positions count from 0 within a "
    "chunk), and more scored positions than `n_ctx × n_chunks`.",
    why="A position beyond the context does not exist; the card's context or positions disclosure "
    "is wrong, and the number cannot be reproduced.",
    example="  context: {n_ctx: 512, ...}\n  positions:\n    scheme: explicit\n    explicit: [100, 700]\n",
    fix="  context: {n_ctx: 512, ...}\n  positions:\n    scheme: explicit\n    explicit: [100, 500]\n",
)

DIRECTION_UNSTATED = rule(
    code="KLD204",
    name="direction-unstated",
    severity="error",
    summary="a reported KLD number's direction is not stated",
    what="Flags `results.kld`, `results.reverse_kld` or `results.js` when `direction.reported` does not "
    "list forward, reverse or js respectively, and a `model-index` `kl_divergence*` metric without a "
    "`direction` arg.",
    why="KL(P_ref ‖ P_cand) and KL(P_cand ‖ P_ref) are different numbers; a reader cannot tell which one "
    "is shown.",
    example="  direction:\n    reported: [forward]\n  candidates:\n  - results:\n"
    "      reverse_kld: {mean: 0.019}\n",
    fix="  direction:\n    reported: [forward, reverse]\n  candidates:\n  - results:\n"
    "      reverse_kld: {mean: 0.019}\n",
)

CALIBRATION_IS_EVALUATION_TEXT = rule(
    code="KLD205",
    name="calibration-is-evaluation-text",
    severity="error",
    summary="the evaluation text is (part of) a candidate's calibration data",
    what="Flags a candidate whose `calibration.sha256` equals `evaluation_text.sha256`, or whose "
    "calibration declares `overlaps_evaluation_text: true`.",
    why="A quantization calibrated on the very text it is scored on looks better than it is on any "
    "other text; the KLD is optimistic and not comparable with other candidates.",
    example="    calibration:\n      dataset: Salesforce/wikitext\n      overlaps_evaluation_text: true\n",
    fix="    calibration:\n      dataset: bartowski/calibration_datav3\n      overlaps_evaluation_text: false\n",
)

MODEL_INDEX_MISMATCH = rule(
    code="KLD206",
    name="model-index-mismatch",
    severity="error",
    summary="a model-index kl_divergence value matches no candidate's mean KLD",
    what="Checks that each `model-index` metric of type `kl_divergence` equals (to the digits written) the "
    "forward mean KLD of a candidate in the `kld_evaluation` block.",
    why="The Hub shows the model-index number; if it differs from the disclosed result, the disclosures "
    "do not describe the number readers see.",
    example="    - type: kl_divergence\n      value: 0.0125   # block says mean: 0.0213\n",
    fix="    - type: kl_divergence\n      value: 0.0213\n",
)

# Defined next to the portability analysis it reports (kldcard.stack.portability).
from kldcard.stack.portability import CROSS_STACK_RULE  # noqa: E402

CROSS_STACK_COMPARISON = rule(**CROSS_STACK_RULE)

QUANTIZATION_CONTRADICTS_FILE = rule(
    code="KLD211",
    name="quantization-contradicts-file",
    severity="error",
    summary="a candidate's stated quantization contradicts what its file says",
    what="Compares each candidate's `model.quantization` with the file type the file itself states: "
    "`model.tensors.file_type` in the block (read from the GGUF's tensor table by kldcard evaluate) and, "
    "when the candidate's GGUF file is next to the card, the file's own `general.file_type`.",
    why="Two \"4-bit\" files can quantize different tensors, and a label copied from another file is "
    "a wrong disclosure: the KLD shown then belongs to another quantization than the one named.",
    example="    model: {model: owner/name-GGUF, quantization: q4_k_m, tensors: {file_type: MOSTLY_Q8_0}}\n",
    fix="    model: {model: owner/name-GGUF, quantization: q8_0, tensors: {file_type: MOSTLY_Q8_0}}\n",
)

TOP_K_CLAIMED_AS_FULL = rule(
    code="KLD208",
    name="top-k-claimed-as-full",
    severity="error",
    summary="vocabulary.truncation says full, but the logits came from a top-k source",
    what="Flags `vocabulary.truncation: full` when the block shows the distributions were truncated: a "
    "runtime `engine` that is an OpenAI-compatible server capture (`openai-server...`), a `vocabulary.top_k`, "
    "or any value in the block that names prompt log-probabilities or top-k (`prompt_logprobs`, "
    "`top_logprobs`, `logprobs`, `top-k`). A candidate that discloses its own `vocabulary` (truncation "
    "top-k, as `kldcard evaluate` writes for a served candidate) is not evidence against the block's.",
    why="Serving APIs return only the k most likely tokens per position. A KLD over the top k plus a tail "
    "is a different (usually smaller) number than the full-vocabulary KLD; calling it full makes it look "
    "comparable with full-vocabulary results when it is not.",
    example="  vocabulary:\n    truncation: full\n  candidates:\n  - runtime:\n"
    "      engine: openai-server:vllm   # prompt_logprobs: 20\n",
    fix="  vocabulary:\n    truncation: top-k\n    top_k: 20\n    tail: lumped\n",
)

IID_INTERVAL_OVER_CHUNKS = rule(
    code="KLD209",
    name="iid-interval-over-chunks",
    severity="info",
    summary="the interval treats tokens as independent, but the text was scored in several context windows",
    what="Flags `aggregation.uncertainty.method` `bootstrap` or `se-iid` (tokens resampled or counted as "
    "independent) when `context.n_chunks` is above 1.",
    why="Tokens of one context window share their context, and divergence between stacks comes in "
    "clusters, so an i.i.d. interval is too narrow: by a factor of about sqrt((1+rho)/(1-rho)) for a lag-1 "
    "correlation rho (4.4 at rho = 0.9). Gaps between candidates then look significant when they are noise.",
    example="  context:\n    n_chunks: 40\n  aggregation:\n    uncertainty:\n      method: bootstrap\n",
    fix="  aggregation:\n    uncertainty:\n      method: window-bootstrap   # kldcard compare (default)\n"
    "      block:\n        unit: context-window\n",
)

CONTROL_ON_ANOTHER_STACK = rule(
    code="KLD210",
    name="control-on-another-stack",
    severity="warning",
    summary="an excess over a control subtracts a floor measured on another stack",
    what="Flags each `comparison.excess_over_control` entry whose candidate's runtime differs from the "
    "control candidate's runtime in an arithmetic-relevant coordinate (the weights' dtype excepted: that "
    "is what the control and the candidate differ in).",
    why="A control measures the price of the comparison itself on one stack and text. Subtracting it "
    "from a candidate measured on another stack mixes two different prices: the excess is not an estimate "
    "of the quantization's own error.",
    example="  comparison:\n    control: bf16-on-vllm\n    excess_over_control:\n    - candidate: q4-on-llamacpp\n",
    fix="Measure the control on the candidate's own stack (the reference weights in that engine and build), "
    "or drop the excess for that candidate.",
)
