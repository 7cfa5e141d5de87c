"""D2 recognisers (kldcard.lint.read.runtime): the engine or hardware of the measurement named without a
version reads as ``incomplete`` (issue 28, R8'), and engines named for something else are not read."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


def d2(text: str):
    return reading(CLAIM + text, 2)


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        ("Scores come from a `llama-perplexity` run over the test file.\n", "llama.cpp"),  # the tool names its engine
        ("```\n./build/bin/llama-perplexity -m q.gguf --kl-divergence-base base.kld --kl-divergence\n```\n", "llama.cpp"),
        ("Numbers from `eval/model_diff.py` of the quantizer.\n", "exllamav3"),
        ("- **Inference:** a web UI on top of llama.cpp (log-probs of the prompt)\n", "llama.cpp"),  # a labelled field
        ("The reference logits were produced by vLLM, the candidate's by SGLang.\n", "vllm"),  # a measurement sentence
        ("La comparación se hizo con llama.cpp sobre Metal.\n", "llama.cpp"),  # Spanish
        ("基准 logits 用 PyTorch 计算。\n", "pytorch"),  # Chinese
    ],
)
def test_engine_without_version_is_incomplete(text, engine):
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("engine") == engine, d
    assert "give the engine's version or build" in d.needs


def test_a_star_cpp_engine_with_its_version_is_stated():
    d = d2("KLD measured in a fork, Acme.cpp v0.3.2, against the BF16 logits.\n")
    assert d.status == "stated" and d.value.get("version") == "v0.3.2", d


@pytest.mark.parametrize(
    "text",
    [
        "Hardware of the run: a Ryzen AI Max+ 395 with 128 GB.\n",
        "All KLD runs used the 5080 in my desktop.\n",
        "Logits compared on a TPU v5e host.\n",  # a TPU generation
    ],
)
def test_hardware_the_evidence_patterns_did_not_list(text):
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("device"), d


@pytest.mark.parametrize(
    "text",
    [
        "GGUF is the file format that llama.cpp and its front ends load.\n",  # background
        "See the llama.cpp PR #1234 for the KLD of other quants.\n",  # a citation, not a run
        "These are KLD measurements, not MLX throughput results.\n",  # negated
        "Despliegue: llama.cpp b5000 con llama-server.\n",  # deployment
        "Convert with `mlx_lm.convert --hf-path x -q` first.\n",  # the converter is not the engine of the measurement
        "Quantized with exllamav3 and uploaded today.\n",  # the quantizer
    ],
)
def test_engines_named_for_something_else_are_not_read(text):
    assert d2(text).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Requirements: transformers >= 4.60 and a recent torch.\n",  # a minimum version is a requirement
        "Serve it with `vllm serve acme/Model-2.5-9B --max-model-len 8192`.\n",  # the version is the model's
        "Speed rows were measured on an M2 Ultra (mlx 0.30.1, 128-token greedy generation).\n",  # speed only
        "The 4070 cannot hold the 20 GB file, so it is not offered.\n",  # memory only
        "The KLD runs skipped the 4070, which cannot hold the 20 GB file.\n",  # the device that could not run it
        "## Performance on a DGX Spark\n\nPrefill 3000 tok/s.\n",  # a performance subsection
        "See the [DGX Spark setup guide](setup.md) for the flags.\n",  # a link's text names a document
        "Este GGUF está preparado para llama.cpp y sus derivados (Ollama, etc.).\n",  # compatibility
    ],
)
def test_runtimes_named_for_speed_memory_or_requirements_are_not_read(text):
    assert d2(text).status == "missing", d2(text)


def test_one_engine_table_for_card_text():
    """The patterns, the reading's value and read.runtime read one table; the engines kldcard runs keep the
    canonical names they have there (kldcard.engines), so a card and a capture name an engine alike."""
    from kldcard.engines import ENGINES
    from kldcard.lint.read import engine_names

    assert {e.canonical for e in engine_names.TABLE} >= set(ENGINES)
    assert engine_names.canonical("llama-server") == "llama.cpp" and engine_names.canonical("MLX_LM") == "mlx"
    assert engine_names.canonical("ik_llama.cpp") == "ik_llama.cpp" and engine_names.canonical("ggml") is None
    assert engine_names.other_engine("a MaxText logit check on a TPU") == "maxtext"


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        # the tool's printed block with no engine named anywhere: the tool names llama.cpp
        ("```\n====== KL divergence statistics ======\nMean    KLD:   0.004512 ±   0.000102\n```\n", "llama.cpp"),
        ("| Quant | PPL(Q)/PPL(base) | RMS Δp | KLD |\n|---|---|---|---|\n| Q4_K | 1.02 | 3.1 | 0.031 |\n", "llama.cpp"),
        ("| Quant | KL-div (q→o) | KL-div (o→q) | Top-1 |\n|---|---|---|---|\n| 4.0bpw | 0.021 | 0.020 | 0.93 |\n", "exllamav3"),
    ],
)
def test_a_printed_tool_names_its_engine_as_incomplete(text, engine):
    d = d2(text)
    assert d.status == "incomplete" and d.value == {"engine": engine}, d


def test_same_top_p_alone_does_not_name_the_engine():
    d = d2("| Quant | KLD | Same top p |\n|---|---|---|\n| Q4_K | 0.031 | 93.1 |\n")
    assert d.status == "missing", d


@pytest.mark.parametrize(
    "text",
    [
        "The weights were quantized on a B200 overnight.\n",  # made the files
        "Fitting the codebook took 154 seconds on an M3 Ultra.\n",  # a duration on it: speed
        "Each KL search took 13 hours on a cloud box (an RTX 6000 Ada) before the fix.\n",
        "Checked while served on a DGX Spark afterwards.\n",  # serving
        "Checked while served on a small box (GB10) afterwards.\n",  # the device in parentheses after the role
        "Method and the tested RTX 5090 inference profile are in the repository.\n",  # a deployment profile
        "Its KV method beats the existing llama.cpp quantizations on KLD per bit.\n",  # an engine's artefacts
        "| Machine | RAM | Prefill tok/s | Gen tok/s |\n|---|---|---|---|\n| M1 Max | 64 GB | ~350 | ~32 |\n",  # a speed table
        "<ul><li><a href=\"https://example.org/kv\">KLD of a quantized KV cache - vLLM</a></li></ul>\n",  # a link's text
        "We recommend llama.cpp b5000 or newer builds for these files.\n",  # a recommendation to the user
        "Pick SGLang 0.4.6 for production use.\n",  # for production, not the measurement
        "## How to run\n\nStart the server with llama-server from llama.cpp b5000 and the Q4 file.\n",  # a usage section
    ],
)
def test_hardware_or_engine_named_for_another_job_is_not_the_runtime(text):
    assert d2(text).status == "missing", d2(text)


def test_hardware_in_a_kld_table_row_is_still_the_runtime():
    d = d2("| GPU | Mean KLD | tok/s |\n|---|---|---|\n| RTX 4090 | 0.021 | 41 |\n")
    assert d.status != "missing" and d.value.get("device"), d


def test_a_benchmark_run_on_hardware_is_the_runtime():
    # "run on" (the runs were done there) is the measurement's; "runs on" (it can run there) is a deployment
    assert d2("This round covers perplexity and KL divergence, run on an M4 Max.\n").value.get("device") == "M4 Max"
    assert d2("The Q4 file runs on an M4 Max with room to spare.\n").status == "missing"


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("KLD measured with llamafile 0.8.13 against the F16 logits.\n", "engine", "llamafile"),  # an engine of the table
        ("Both logit sets were computed in ik_llama on the same box.\n", "engine", "ik_llama.cpp"),
        ("All KLD runs used a Tesla T4 from a notebook service.\n", "device", "Tesla T4"),  # a data-centre card by name
    ],
)
def test_more_engines_and_devices_are_read(text, key, value):
    d = d2(text)
    assert d.status != "missing" and d.value.get(key) == value, d


def test_a_recommendation_elsewhere_in_the_sentence_does_not_veto_the_measurements_engine():
    d = d2("As recommended by the docs, we measured KLD with llama.cpp b4000 on an RTX 4090.\n")
    assert d.status == "stated" and d.value.get("engine") == "llama.cpp", d


def test_a_kld_measured_through_a_served_engine_keeps_its_engine():
    d = d2("The KLD of the quant served with vLLM 0.9.1 was read from its logprobs.\n")
    assert d.status == "stated" and d.value.get("engine") == "vllm", d


@pytest.mark.parametrize(
    "text",
    [
        "The checkpoint targets an RTX 5090 with its own serving stack.\n",  # aim
        "El checkpoint apunta a una RTX 4090 con un stack de servido propio.\n",  # aim (Spanish)
        "Está pensada para servirse en 4 GPU RTX 3090 con TP4.\n",  # meant to be served on
        "La idea es hacer inferencia en GPU Ampere, con el modelo repartido en dos RTX 3090.\n",  # inference on
        "Made to fit in the memory of one RTX 4090 (24 GB).\n",  # fit
        "Needs exllamav3 v0.0.9 or the dev branch.\n",  # a requirement
        "- GPU recomendadas: NVIDIA RTX 5090 como objetivo principal.\n",  # recommended
        "**Rendimiento de servicio** (RTX 4090, contexto 32k):\n",  # a serving caption
        "The code corpus is six source files from the MLX framework at v0.30.0.\n",  # a corpus's source
    ],
)
def test_hardware_or_engine_the_files_are_aimed_at_is_not_the_runtime(text):
    assert d2(text).status == "missing", d2(text)


@pytest.mark.parametrize(
    "text",
    [
        "The KLD was measured on an RTX 4090 against the BF16 logits.\n",  # the measurement's device
        "We need the KLD, measured on an RTX 4090, to stay low.\n",  # a KL term between the aim word and the device
    ],
)
def test_a_device_the_kld_was_measured_on_stays_the_runtime(text):
    assert d2(text).status != "missing", d2(text)


# A list item labelled as a requirement governs all its clauses, also those after a ";": the fact sheets of holdout15/c
# (es_ficha_woooflet_muse_glimmer: "GPU recomendadas: ...; una única <GPU> o una <GPU> también tendrían que bastar") and
# holdout17/c (es_ficha_unstablellama_qwopus38: "GPU recomendadas: con contextos cortos, <GPU>; con contextos largos, <GPU>"),
# two model authors, labelled D2 M (the hardware a user needs, not the measurement's)
@pytest.mark.parametrize(
    "text",
    [
        "- Suggested hardware: none verified; any card with 24 GB should do, for instance an RTX 4090 or an L40S.\n",
        "- Recommended GPUs: for short prompts, one RTX 3090; for long ones, an A100 80GB.\n",
        "- GPU recomendadas: basta con una RTX 4070; para contextos largos, mejor una H100.\n",
        "- **Minimum VRAM**: 16 GB; it loads on an RTX 4080 with a short context.\n",
        "- VRAM estimada: 20 GB; cabe en una RTX 3090.\n",
    ],
)
def test_every_clause_of_a_requirement_item_is_not_the_runtime(text):
    assert d2(text).status == "missing", d2(text)


# ... but not a clause of such an item that says it measured there (holdout9/c es_ficha_lucebox: "GPU recomendadas: la
# <GPU> es donde midió el autor; ..."), nor an item whose label names no requirement ("Tested hardware:")
@pytest.mark.parametrize(
    "text",
    [
        "- Recommended GPUs: the KLD above was measured on an RTX 4090; an A100 also works.\n",
        "- GPU recomendadas: una A100 o mejor; el autor midió en una RTX 4090.\n",
        "- Tested hardware: one RTX 4090; the KLD run took an hour.\n",
        "- Minimal setup: one RTX 4090; nothing else on the box.\n",  # the setup's size, not a requirement
        "- Minimum KLD: 0.0002; all rows on an RTX 4090.\n",  # a KL figure's own label
        # a requirement about the files, not the machine (review of round 24): the hardware in it is the figures'
        "- Recommended quant: Q4_K_M; all figures on this card come from one RTX 4090.\n",
        "- Configuración recomendada: ctx 8192; resultados obtenidos en una RTX 4090.\n",
    ],
)
def test_a_measured_clause_or_a_plain_field_keeps_its_hardware(text):
    assert d2(text).status != "missing", d2(text)


@pytest.mark.parametrize("text", ["The KL tests pass on a v6e VM.\n", "KLD from a GX10 run.\n"])
def test_tpu_vms_and_the_gx10_are_hardware(text):
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("device"), d


def test_one_engine_table_serves_prose_tools_and_structured_values():
    """The tool->engine and value->engine spellings live in read.engine_names (and kldcard.engines for the
    engines kldcard runs): a block's "exl3" or "ggml" is an engine, the same words in prose are a format."""
    from kldcard.lint import quantity
    from kldcard.lint.read import engine_names

    assert [quantity.engine(v) for v in ("hf", "llama-cpp-python", "ggml", "exl3", "mlx_lm", "vLLM", "llama-perplexity")] == [
        "transformers", "llama.cpp", "llama.cpp", "exllamav3", "mlx", "vllm", "llama.cpp"]
    assert quantity.engine("my-fork") == "my-fork"
    assert engine_names.canonical("exl3") is None and engine_names.canonical("exl3", value=True) == "exllamav3"
    assert engine_names.by_tool("python model_diff.py -ma a -mb b") == "exllamav3"
    assert engine_names.by_tool("./perplexity -m q.gguf") == "llama.cpp"
    assert engine_names.by_tool("EXL3 quants of the model") is None


# tune-q (issue 28, round 6): runtimes written as a node, a record's field or a title
@pytest.mark.parametrize(
    "text",
    [
        "Checked end to end on the small model (gsm8k, 8xH200 single node): the KL stays flat.\n",  # a count against the name
        "Spec Value\nKL Divergence 0.03 (target <0.3)\nHardware RTX 3090 24GB\nLicense MIT\n",  # a record's field, not the target
        "The first serving + KLD evidence for the checkpoint, taken on 4x RTX PRO 6000 Blackwell.\n",  # KL between the two
    ],
)
def test_hardware_as_a_node_a_field_or_beside_the_kl(text):
    assert d2(text).status in ("stated", "incomplete"), d2(text)


def test_engine_in_the_title_line_is_incomplete():
    text = "# MXFP8 training and SGLang/vLLM rollout\n\nThe rollout's mean KLD is 0.0012 against the trainer.\n"
    d = reading(text, 2)
    assert d.status == "incomplete" and d.value.get("engine") == "sglang", d


@pytest.mark.parametrize(
    "text",
    [
        "Served on 4x H200 for the demo; the KLD below was taken elsewhere.\n",  # deployment, no KL between
        "For years, picking a quant meant you fetch a file, start llama.cpp, and hope the output reads well.\n",  # prose
    ],
)
def test_deployment_and_a_prose_first_line_are_not_read(text):
    assert reading(text + "\nThe Q4_K_M file reaches a KLD of 0.0231.\n", 2).status == "missing"


def test_a_llama_cpp_release_tag_is_a_build_whatever_word_stands_before_it():
    assert d2("Measured against Homebrew libllama b7650 (the CI default).\n").status in ("stated", "incomplete")
    assert d2("Three numbers per line: ours / vanilla b11178 / candidate A.\n").status in ("stated", "incomplete")


@pytest.mark.parametrize("text", ["Necesita llama.cpp con soporte de la arquitectura (b10355 o posterior).\n",
                                  "Any build from b10685+ loads the file.\n"])
def test_a_release_tag_as_a_minimum_is_not_the_run(text):
    assert d2(text).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "KLD measured on 2x 5060 Ti 16GB, f16 KV.\n",  # a count of cards without "RTX"
        "The KL of the INT8 all-reduce was taken on 2x T4 over PCIe.\n",
    ],
)
def test_a_count_of_cards_is_the_measurements_hardware(text):
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("device"), d


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        ("The mismatch comes from the trainer's KV eviction and vLLM's KV eviction.\n", "vllm"),
        ("Separate inference (SGLang) and training (Megatron) engines disagree on routing.\n", "sglang"),
    ],
)
def test_an_engine_of_an_rl_parity_text_is_the_runtime(text, engine):
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("engine") == engine, d


def test_an_engine_in_a_row_of_a_kl_table_is_the_runtime():
    text = "| Quant | Mean KLD | Runs in |\n|---|---|---|\n| IQ2_S | 0.31 | llama.cpp |\n"
    d = d2(text)
    assert d.status == "incomplete" and d.value.get("engine") == "llama.cpp", d


def test_an_engine_in_a_row_of_a_speed_table_is_not_the_runtime():
    text = "| Engine | tok/s |\n|---|---|\n| llama.cpp | 41 |\n"
    assert d2(text).status == "missing"
