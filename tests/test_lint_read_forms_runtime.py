"""D2 as cards write them beyond the main patterns (kldcard.lint.read.runtime and
kldcard.lint.tool_defaults.recognise): hardware as a CUDA architecture, a Grace-Blackwell superchip or a compute stack
with its version; an engine's release series, forward passes in torchtitan, a build pinned by its commit; and which
mentions of llama-perplexity name the measuring tool (its defaults are inferred only then). Each form in the
project's own words, next to a look-alike that must not be read: a quantizer, a speed or memory row, a model page's
generation snippet, a thread's repository line, a tool the text sets aside."""

from __future__ import annotations

import pytest
from helpers_reading import reading

from kldcard.lint.tool_defaults import recognise

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


# ---- D2: the engine and hardware ---------------------------------------------------------------------------------
def test_an_engine_with_a_major_release_series():
    text = "The reload fails with max KL `3.4e-02` against the saved logits.\n\nThe recipe pins `eager`; transformers 5.x resolves to `sdpa`.\n"
    d = reading(text, 2)
    assert d.status == "incomplete" and d.value["engine"] == "transformers", d


def test_an_engine_with_an_x_inside_a_word_is_no_release_series():
    text = "The reload fails with max KL `3.4e-02` against the saved logits.\n\nSee transformers 5.xlsx for the sheet.\n"
    assert reading(text, 2).status == "missing"


def test_the_romance_quantize_with_clause_names_the_quantizer_not_the_measurement():
    text = ("El usuario los comprimió a 6 bits con precisión mixta mediante la herramienta oQ (oMLX v0.7.0).\n\n"
            "La divergencia KL directa es 0,0017.\n")
    assert reading(text, 2).status == "missing"


def test_an_engine_with_its_version_in_a_spanish_measurement_is_read():
    text = "Medimos la divergencia KL con oMLX v0.7.0 en un Mac Studio: 0,0017.\n"
    assert reading(text, 2).status != "missing"


def test_an_engines_quantization_mode_is_a_format_not_a_run():
    text = ("At the same bitrate the new codecs halve the divergence (as measured by KLD).\n"
            "| Model | Budget | MLX affine | new | cut |\n|---|---|---|---|---|\n| Qwen3-8B | 4-bit | 0.0577 | 0.0208 | 2.8x |\n")
    assert reading(text, 2).status == "missing"


def test_an_engine_named_as_the_measurements_runtime_still_counts():
    text = "We measured the KLD with MLX on the same prompts: 0.0577 for the 4-bit affine quant.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("arch", ["sm_60", "sm_75", "sm_86", "sm_120a"])
def test_a_cuda_architecture_names_the_hardware(arch):
    text = f"We measured the KL divergence on {arch} against the FP32 path: median KL 0.0049.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("word", ["sm_4", "small_60", "sm_600x", "asm_75"])
def test_words_that_only_look_like_an_architecture_are_not_read(word):
    text = f"We measured the KL divergence in {word} against the FP32 path: median KL 0.0049.\n"
    assert reading(text, 2).status == "missing"


def test_a_fast_path_is_a_code_path_not_a_speed_sentence():
    text = ("## The sm_60 FP16 fast-path fix\n\nTaking sm_60 out of the fast path changes the output.\n\n"
            "Measured upstream: median KL divergence 0.004962 -> 0.000001.\n")
    assert reading(text, 2).status != "missing"


def test_hardware_in_a_speed_sentence_is_still_vetoed():
    text = ("## Notes\n\nDecode is faster on sm_60 than on the older card.\n\n"
            "Measured upstream: median KL divergence 0.004962 -> 0.000001.\n")
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize("box", ["two GB200 nodes", "one GB300 tray"])
def test_a_grace_blackwell_superchip_names_the_hardware(box):
    text = f"We measured the mean KL of the rollout engine against the trainer on {box}: 0.0031.\n"
    assert reading(text, 2).status != "missing"


def test_a_word_that_only_looks_like_a_superchip_is_not_read():
    text = "We measured the mean KL of the rollout engine against the trainer on the GB2000 preset: 0.0031.\n"
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize("stack", ["ROCm 7.2.1", "HIP 6.4.43484", "CUDA 12.8"])
def test_a_compute_stack_with_its_version_names_the_platform(stack):
    text = f"## Results ({stack}, int8 activations)\n\nThe mean KL against the bf16 run is 0.0042.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("stack", ["ROCm", "CUDA graphs", "HIP-ified"])
def test_a_compute_stack_without_a_version_is_not_read(stack):
    text = f"## Results ({stack} path, int8 activations)\n\nThe mean KL against the bf16 run is 0.0042.\n"
    assert reading(text, 2).status == "missing"


SPEED_ROWS = (
    "| Metric | Ours | Theirs |\n|---|---|---|\n| KL vs bf16 | 0.011 | 0.019 |\n"
    "| First token on RTX 4090 | 41 ms | 38 ms |\n| Memoria a 8k de contexto (RTX 4090) | 1,1 GB | 1,4 GB |\n"
    "| 16k context supported | yes (RTX 4090, L40) | yes |\n"
)


def test_hardware_in_a_speed_memory_or_support_row_is_not_the_runtime():
    assert reading(SPEED_ROWS, 2).status == "missing"


def test_hardware_in_a_row_of_its_own_is_still_the_runtime():
    text = "| Metric | Ours | Theirs |\n|---|---|---|\n| KL vs bf16 | 0.011 | 0.019 |\n| Measured on | RTX 4090 | RTX 4090 |\n"
    assert reading(text, 2).status != "missing"


def test_a_model_page_generation_snippet_names_no_engine():
    text = (
        "# tiny-MLX\n\nA 4-bit MLX conversion of acme/tiny.\n\nMean KL against the original model: 0.031 nats.\n\n"
        "- Local Apps Settings\n- LM Studio\n- MLX LM\n"
        "How to use acme/tiny-MLX with MLX LM:\nGenerate or start a chat session\n"
        "# Install MLX LM uv tool install mlx-lm # Generate some text mlx_lm.generate --model \"acme/tiny-MLX\" --prompt \"Hi\"\n"
    )
    assert reading(text, 2).status == "missing"


def test_a_measuring_mlx_lm_program_still_names_mlx():
    text = "We measured the KL with `mlx_lm.kld --baseline-model ./bf16`: mean KL 0.031 nats.\n"
    assert reading(text, 2).status != "missing"


def test_forward_passes_in_torchtitan_name_the_engine():
    text = (
        "I converted the checkpoint and ran forward passes in torchtitan against the HF model.\n\n"
        "The average KL divergence came out at 0.00012.\n"
    )
    assert reading(text, 2).status == "incomplete"


@pytest.mark.parametrize(("text", "status"), [
    # a run's engine after its verb, whatever background the sentence also gives; a download alone names no run
    ("I downloaded the model from the hub, converted it, and ran forward passes in torchtitan.\n\nThe average KL was 0.00012.\n", "incomplete"),
    ("I downloaded the GGUF build for llama.cpp from the hub.\n\nThe average KL was 0.00012.\n", "missing"),
    # rule 15c.1: a thread's repository line is where it is filed, not the engine (the title still counts)
    ("pytorch/torchtitan · pull request #9 · merged · Python\n# conversion check\n\nThe average KL was 0.00012.\n", "missing"),
    ("pytorch/torchtitan · pull request #9 · merged · Python\n# check the vLLM rollout\n\nThe average KL was 0.00012.\n", "incomplete"),
])
def test_a_runs_engine_and_a_threads_repository_line(text, status):
    assert reading(text, 2).status == status


@pytest.mark.parametrize(("text", "status"), [
    # a tool said to be of no use names no engine of the run, also where it stands in for its defaults
    ("`llama-perplexity` does not apply here: the model has no LM head.\n\nThe KL over the decision tokens is 0.0031.\n", "missing"),
    ("We used `llama-perplexity` here, with the BF16 file as the base.\n\nThe KL over the decision tokens is 0.0031.\n", "incomplete"),
])
def test_a_tool_of_no_use_names_no_engine(text, status):
    assert reading(text, 2).status == status


@pytest.mark.parametrize(("text", "found"), [
    # "measured on <GPU>" names the measurement's hardware, whatever the sentence also runs; measured speeds do not
    ("All of it runs on one CUDA host (measured on an RTX 4090) with the same build.\n\nThe mean KL of the 3-bit file is 0.0213.\n", True),
    ("Speeds measured on an RTX 4090 with the same build.\n\nThe mean KL of the 3-bit file is 0.0213.\n", False),
])
def test_hardware_measured_on(text, found):
    assert (reading(text, 2).status != "missing") is found


def test_torchtitan_in_a_background_sentence_is_not_the_engine():
    text = (
        "This repository is a fork of torchtitan.\n\n"
        "The average KL divergence came out at 0.00012.\n"
    )
    assert reading(text, 2).status == "missing"


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


# ---- the measuring tool named (kldcard.lint.tool_defaults.recognise) ---------------------------------------------
def _named(text: str) -> str | None:
    tool = recognise(text)
    return tool.name if tool else None


@pytest.mark.parametrize(
    "text",
    [
        # a column of a table, or a transposed row
        "| Quant | Mean KLD | Same top p |\n|---|---|---|\n| Q4_K_M | 0.031 | 93.1 % |\n",
        "| Metric | Value |\n|---|---|\n| Same top p       |    98.41 ± 0.08 %    |\n",
        "| Tier | PPL | KLD | RMS Δp |\n|---|---|---|---|\n| small | 9.1 | 0.08 | 4.2 % |\n",
        # the tool's "Label: value" layout, quoted in prose
        'The port matches upstream ("Mean KLD: 0.0412 ± 0.0031", "Same top p: 93.15 ± 0.30 %").\n',
        # beside another of its statistics with a value
        "- int4, 8B: mean KLD 0.0031, same-top-p 98.2 %, median KLD 0.0009.\n",
        # its name or command line
        "Scored with `llama-perplexity --kl-divergence` against the bf16 logits.\n",
        # its KL option is the measurement itself, whatever else the sentence says
        "Instead of our own script we now run `llama-perplexity --kl-divergence` on every build.\n",
    ],
)
def test_the_tool_named_or_printed(text):
    assert _named(text) == "llama-perplexity"


@pytest.mark.parametrize(
    "text",
    [
        # a label as words of prose
        "- The smaller embedding quant is borderline: KLD 0.071 (just above the bar). Same top p 86.1% (0.5pp below).\n",
        "## KL divergence + same top-p against BF16 (all chunks)\n",
        "| Claim | Verdict |\n|---|---|\n| int4 is lossless | No: about 4x the KLD, and 2x its RMS Δp. |\n",
        # a pattern a script greps for in the tool's output
        "kld=$(sed -n 's/^Mean    KLD: *\\([0-9.]*\\).*/\\1/p' <<<\"$out\")\ntop=$(sed -n 's/^Same top p: *\\([0-9.]*\\).*/\\1/p' <<<\"$out\")\n",
        # named as the former or removed setup
        "Until now our quants were scored against a reference built with `llama-perplexity`. The new harness runs our own forward.\n",
        "- **Cleanup:** gone are `old_eval` (llama-perplexity + a custom reader) and `convert_ref`.\n",
    ],
)
def test_a_label_in_prose_or_code_or_a_former_tool_names_no_tool(text):
    assert _named(text) is None


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


# a device or engine under a training heading trained the model: another step than the measurement (runtime_roles)
TRAINED = (
    "# tiny-coder\n\nMean KL against the base model: 0.018.\n\n## Training details\n\n"
    "The run took two epochs with a cosine schedule on four H100 GPUs.\n"
)


def test_hardware_in_a_training_section_is_not_the_runtime():
    assert reading(TRAINED, 2).status == "missing"


def test_hardware_in_a_training_sections_kl_measurement_is_still_read():
    text = TRAINED + "After training, the KL against the base model was measured on one H100: mean 0.018.\n"
    assert reading(text, 2).status != "missing"


def test_an_engine_in_a_conversion_checked_by_its_kl_is_the_checks():
    text = "The conversion was checked in two steps: between the F16 logits in llama.cpp and the HF ones the mean KL is 7.6e-6.\n"
    assert reading(text, 2).status != "missing"


def test_an_engine_that_converted_the_files_is_still_the_quantizers():
    text = "The files were converted with llama.cpp and its conversion script; the mean KL to bf16 is 0.0213.\n"
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Against the standard Q4_K_M of llama.cpp (247 MB) the KL is 0.0255; ours gets 0.0142.\n",
        "Con el Q4_K_M estándar de llama.cpp la KL media es de 0,0255 y con el nuestro de 0,0142.\n",
        "The mean KL of llama.cpp's Q4_0 format against bf16 is 0.0255.\n",
    ],
)
def test_an_engine_owning_a_quant_type_is_not_the_runtime(text):
    assert reading(text, 2).status == "missing"


def test_an_engine_that_scored_a_quant_type_is_still_the_runtime():
    text = "We scored the Q4_K_M file with llama.cpp: the mean KL against bf16 is 0.0255.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("line", [
    "Tested commit: `3f9a2c71be04d5e6f7a8b9c0d1e2f3a4b5c6d7e8`",
    "- fork commit: `9b1c4d2e7a`",
    "The numbers below were measured at fork commit `5e7d21c9f`.",
    "Code at commit `a41f09e` on the main branch.",
])
def test_the_commit_the_measured_code_was_at_is_a_build(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("line", [
    "The commit message says: `fix the loader`.",  # no hash
    "See commit 1234567 for the loader.",  # digits only: a number, not a hash
    "Committed at 2026-08-31 by the release bot.",
    "Model commit: `3c5bd17a9e`",  # the weights' commit, not the engine's
    "- Dataset commit: `9f2e6a1b4c`",
])
def test_commit_words_without_a_hash_name_no_build(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize("gpu", ["a single T4 GPU", "Colab L4 GPU", "two A30 GPUs"])
def test_a_datacentre_gpu_with_its_class_noun_is_hardware(gpu):
    text = f"Hardware: {gpu}.\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("word", ["the T4-class GPU budget", "the AT4 GPU vendor", "the L4 GPU-hours"])
def test_words_that_only_contain_a_gpu_name_are_not_hardware(word):
    text = f"The plan mentions {word}.\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status == "missing"


# ---- D2: TensorRT-LLM by NVIDIA's own short name (holdout3 modelopt's docs link, holdout15 fr_verdict)
def test_trt_llm_names_tensorrt_llm():
    d = reading("The W4A4 engine was measured with TRT-LLM 0.21; its max KL is 0.96.\n", 2)
    assert d.status != "missing" and "TRT-LLM" in str(d.evidence[0].text), d


def test_a_word_that_only_contains_trt_llm_is_not_read():
    assert reading("The W4A4 engine's max KL is 0.96 (see the my-TRT-LLM-notes page).\n", 2).status == "missing"


# ---- a build named by the word for the code that ran: a table's "commit" key cell, "Binary"/"Source" with a hash,
# the engine's base (sparkinfer h12/b, course_proof h12/a, voipmonitor h13/d, larql h13/a, kpack h14/b, sushi h4/a,
# mlx_serve h14/a: seven authors)
@pytest.mark.parametrize("line", [
    "| Field | Value |\n|---|---|\n| commit | `9e4c07b1d` |",
    "| Setting | Value |\n|---|---|\n| runtime commit | `b81f2a6c3e` |",
    "Binary: source `c02d9e7a`, release build.",
    "Source: `5a7e93c0d1f2b4a6c8e0d2f4b6a8c0e2d4f6b8a1`.",
    "Engine base `7f3e2d1c0b9a` served every run below.",
])
def test_a_hash_under_the_name_of_the_code_that_ran_is_a_build(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("line", [
    "| Field | Value |\n|---|---|\n| model commit | `9e4c07b1d` |",  # the weights' commit
    "| Field | Value |\n|---|---|\n| commit | 4412907 |",  # digits only: a number
    "Source: wikitext-2 test split.",  # no hash: the text's source
    "The source of the weights is `org/model`.",
    "Open source since 2024, see the repo at github.com/org/abc1234def.",  # a hash-like word inside a path
    "Dataset source: `a1b2c3d4`",  # the data's source (review of round 20)
    "Weights source: a1b2c3d4e5",  # the weights' source
    "| Field | Value |\n|---|---|\n| models commit | `9e4c07b1d` |",  # the weights' commit, plural
])
def test_code_words_without_a_build_hash_name_no_build(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status == "missing"


# ---- the project's own binary run from its build folder names the engine, without a version (R8')
# (amp_occamy h11/b "./build/bin/amp-plan", zh_handoff h11/d "`build/gdec-hq2`", zh_qwenox h9/c "BIN=build/qwenox-engine")
@pytest.mark.parametrize("line", [
    "./build/bin/kvrun --model $MODEL --prompt-file eval.txt",
    "BIN=build/tiny-engine bash tools/kl_check.sh",
    "Use `build/fastpath-v2`: it holds the fused kernel.",
])
def test_a_binary_from_the_build_folder_names_the_engine(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    r = reading(text, 2)
    assert r.status == "incomplete"


@pytest.mark.parametrize("line", [
    "The wheels are cached in `build/envs/cu130`.",  # a folder, not a binary
    "./build/bin/test-backend-ops -o MUL_MAT",  # a test program
    "./build/bin/pack-quantize in.safetensors out.bin",  # the quantizer that made the files
    "Open `docs/build/guide` for the steps.",  # a path that only passes through a build folder
])

def test_build_folder_paths_that_run_no_engine_name_none(line):
    text = f"{line}\n\nMean KLD against the BF16 reference: 0.0123.\n"
    assert reading(text, 2).status == "missing"


# llama.cpp's own binaries under their older names are its tools, not a project's engine (review of round 20)
@pytest.mark.parametrize("binary", ["perplexity", "main", "server", "imatrix"])
def test_llama_cpp_binaries_under_older_names_are_no_project_engine(binary):
    from kldcard.lint.read import runtime

    assert runtime.BUILT_BINARY.search(f"./build/bin/{binary} -m model.gguf -f wiki.test.raw --kl-divergence") is None


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("The mean KLD vs BF16 is 0.012, measured on an Intel Arc Pro B70.\n", "Intel Arc Pro B70"),
        ("The mean KLD vs BF16 is 0.012, measured on one NVIDIA T4.\n", "NVIDIA T4"),
        ("The mean KLD vs BF16 is 0.012 on a Radeon RX 7900 XTX.\n", "Radeon RX 7900 XTX"),
        ("The mean KLD vs BF16 is 0.012, measured on a TPU v5e.\n", "TPU v5e"),
        ("The mean KLD vs BF16 is 0.012, measured on Apple M2 Max.\n", "Apple M2 Max"),
    ],
)
def test_accelerators_by_their_makers_names_are_hardware(text, quote):
    d = reading(text, 2)
    assert d.status != "missing" and any(quote in e.text for e in d.evidence), d


@pytest.mark.parametrize("text", ["The mean KLD vs BF16 is 0.012 (tier T4 of the ladder).\n",
                                  "The mean KLD vs BF16 is 0.012; see table A10 in the appendix.\n",
                                  "Ablating heads on L4 raises the mean KLD vs BF16 to 0.03.\n",  # layer 4
                                  "Quality sits at arc c100 level; mean KLD vs BF16 0.012.\n",
                                  "We thank Tenstorrent for the compute; mean KLD vs BF16 0.012.\n"])
def test_short_accelerator_names_without_their_maker_are_not_hardware(text):
    assert reading(text, 2).status == "missing"
