"""D3, the evaluation text, stated without a corpus name the main patterns know
(kldcard.lint.read.eval_text): by its source alone, described without a source (``incomplete``: the
reading asks for the name and source), in another language; and what is not the KLD's text."""

from __future__ import annotations

import re

import pytest
from helpers_reading import card, claims, reading

from kldcard.card.document import parse_card
from kldcard.lint.markdown import scan
from kldcard.lint.prose import check_prose
from kldcard.lint.read import eval_text_units


def d3(text: str):
    return reading(text, 3)


CLAIM = "Q4_K_M reaches a KLD of 0.0231"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} on the same sealed 25-window panel as the other rows.\n",
        f"{CLAIM} over 200 validation documents.\n",
        f"{CLAIM}; 8 prompts × 128 tokens, teacher-forced.\n",
        f"{CLAIM} on the short prompts and 0.09 on the long probing prompt.\n",
        f"{CLAIM} over 120,000 tokens taken from chat, code and tool calls.\n",
        f"{CLAIM} on the held-out drafts of the evaluation set.\n",
        f"{CLAIM}, scored on the 36-sequence quality corpus.\n",
        f"{CLAIM}.\n\n| Setting | Value |\n|---|---|\n| corpus | `slices/mixed-2048.txt` |\n",
        "Q4_K_M 的 KLD 为 0.0231（评测文本为自建对话）。\n",
        f"{CLAIM}（評価テキストは社内の記事）。\n",
        f"{CLAIM} (texto de evaluación: notas propias).\n",
        f"{CLAIM} on a mix of chat, code and math.\n",
        f"{CLAIM} over 10 GitHub READMEs.\n",
        f"{CLAIM} on a held-out slice of our chat logs.\n",
        f"{CLAIM}; eight prompts give 15,520 scored positions.\n",
        f"{CLAIM}; every engine reads the same `fixtures/prompts.json` before the logits are compared.\n",
        # a calibration file used as the evaluation text is named by what it was made for, and still read
        f"{CLAIM}, measured on the imatrix's own text (`calibration_datav3.txt`).\n",
        # the card says its calibration text is the evaluation text: read, not vetoed as the calibration source
        f"{CLAIM}. Measured on the calibration corpus: 357 blocks of public-domain text, 356 chunks.\n",
        "Q4_K_M 在评测数据上的 KLD 为 0.0231。\n",
        f"{CLAIM}（検証データ）。\n",
        "Q4_K_M の平均KLDは 0.0231（青空文庫のテキストで測定）。\n",
        "Q4_K_M 在中文新闻文本上的平均 KLD 为 0.0231。\n",
        f"{CLAIM} sobre textos de prueba propios.\n",
        f"{CLAIM} на тестовом наборе.\n",
        f"{CLAIM} sur le corpus d'évaluation.\n",
    ],
)
def test_a_described_text_is_incomplete_and_asks_for_its_source(text):
    d = d3(text)
    assert d.status == "incomplete", d
    assert any("source" in need for need in d.needs)
    assert "KLD303" not in {f.rule_id for f in check_prose(card(text))}


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}, scored on windows of https://huggingface.co/datasets/someone/fidelity-panel-v1.\n",
        f"{CLAIM} (`kld-bench --corpus https://example.org/eval.txt --context 8192`).\n",
    ],
)
def test_a_text_given_by_its_source_is_stated(text):
    assert d3(text).status == "stated"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"{CLAIM} on the HuggingFaceH4/ultrachat_200k test split.\n",
         {"name": "HuggingFaceH4/ultrachat_200k", "source": "HuggingFaceH4/ultrachat_200k test"}),
        (f"{CLAIM}, measured on dataset `someone/eval-set`.\n", {"name": "someone/eval-set"}),
        (f"{CLAIM} over 512 samples of OpenWebText.\n", {"name": "OpenWebText"}),
        (f"{CLAIM} on UltraChat.\n", {"name": "UltraChat"}),
        (f"{CLAIM} on C4.\n", {"name": "C4"}),
        (f"{CLAIM} on wikitext-103.\n", {"name": "wikitext-103"}),
        (f"{CLAIM} using text from Project Gutenberg.\n", {"name": "Project Gutenberg"}),
        (f"{CLAIM} on a random 1M-token sample of the Pile.\n", {"name": "the Pile"}),
    ],
)
def test_the_value_names_the_dataset(text, value):
    d = d3(text)
    assert {k: v for k, v in d.value.items() if k in value} == value, d


@pytest.mark.parametrize(
    "text",
    [
        # the text of something else: speed, calibration, a benchmark score
        f"{CLAIM}. The file runs at 50 tok/s on long chat prompts.\n",
        f"{CLAIM}. The imatrix was computed over 200 chat prompts.\n",
        f"{CLAIM}. Q4_K_M also scores 41.7 on GSM8K.\n",
        "| Quant | KLD | GSM8K (%) |\n|---|---|---|\n| Q4_K_M | 0.0231 | 41.7 |\n",
        # a genre sorts the numbers, it is not a text; a corpus alone, or said to be unstated, is no text either
        "Q4_K_M has a KLD of 0.0268 on prose and 0.031 on code.\n",
        f"{CLAIM} on a natural-text corpus.\n",
        f"{CLAIM}. The table does not specify the evaluation corpus.\n",
        f"{CLAIM}. The prompts are deliberately not wikitext.\n",
        # a known corpus named as the calibration set, in the clause that says so
        f"{CLAIM} (with imatrix Wikitext).\n",
        f"{CLAIM}. The imatrix was computed on the calibration corpus: 357 blocks of public-domain text.\n",
        f"{CLAIM}. We compared no iMatrix and the full ~500k tokens of Wikitext with iMatrix.\n",
        # a panel or prompts in a sentence about something other than the measurement
        f"{CLAIM}.\n\nThe settings panel lists 12 prompts for the demo.\n",
    ],
)
def test_what_is_not_the_kld_text_is_missing(text):
    assert d3(text).status == "missing"


def test_a_perplexity_cell_names_the_text_of_a_kld_table():
    text = "| Quant | KLD | PPL (wikitext-2, ctx 512) |\n|---|---|---|\n| Q4_K_M | 0.0231 | 6.59 |\n"
    assert d3(text).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} on the same sealed 25-window panel.\n",
        f"{CLAIM} on a mix of chat, code and math.\n",
        f"{CLAIM} over 10 GitHub READMEs.\n",
        f"{CLAIM} on a held-out slice of our chat logs.\n",
        f"{CLAIM} over 200 validation documents.\n",
    ],
)
def test_a_text_described_without_a_name_asks_for_the_name_and_the_source(text):
    d = d3(text)
    assert (d.status, d.value) == ("incomplete", {})
    assert d.needs[0] == "name the text" and "source" in d.needs[1]
    message = next(f.message for f in check_prose(card(text)) if f.rule_id == "KLD333")
    assert "name the text" in message and "give its source" in message


@pytest.mark.parametrize(
    ("datasets", "status"),
    [
        ("- someone/model-fidelity-suite-v1\n", "stated"),  # an evaluation text by its name
        ("- someone/model-BF16-Teacher-Logits\n", "stated"),
        ("- someone/calib-mix-v2\n", "missing"),  # the calibration set (D4), not the evaluation text
        ("- someone/jev-distill-corpus-v3\n", "missing"),  # a training set
    ],
)
def test_front_matter_datasets_are_the_text_only_when_their_name_says_so(datasets, status):
    d = d3(f"---\ndatasets:\n{datasets}---\n{CLAIM}.\n")
    assert d.status == status
    if status == "stated":
        assert d.evidence[0].key == "/datasets/0"


@pytest.mark.parametrize(
    ("option", "status", "value"),
    [
        ("--corpus …", "incomplete", {}),  # the argument left out: the reading asks for the name and source
        ("--corpus data/mixed-eval.txt", "incomplete", {"name": "data/mixed-eval.txt"}),  # a local file: no source
        ("--dataset someone/eval-set", "stated", {"name": "someone/eval-set", "source": "someone/eval-set"}),
    ],
)
def test_a_text_option_reads_its_argument(option, status, value):
    d = d3(f"{CLAIM} (`kld-bench {option} --context 8192`).\n")
    assert (d.status, d.value) == (status, value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a Hub id the KL was measured on, one after a label, one tagged with the KL among other uses' texts
        (f"{CLAIM}, measured on `someone/plain-chat-v2`.\n", {"name": "someone/plain-chat-v2"}),
        (f"{CLAIM}.\n\n- Scoring corpus: `someone/plain-chat-v2`\n", {"name": "someone/plain-chat-v2"}),
        (f"{CLAIM}. Refusals on `someone/bad-asks`, divergence on `someone/plain-chat-v2` (KL).\n",
         {"name": "someone/plain-chat-v2"}),
        # a command's input option
        (f"{CLAIM} (`kld-bench --ref a <x> --inputs cases/chat-v1.json`).\n", {"name": "cases/chat-v1.json"}),
        (f"{CLAIM} (`kld-bench --data-path someone/plain-chat-v2`).\n",
         {"name": "someone/plain-chat-v2", "source": "someone/plain-chat-v2"}),
        # a held-out suite, described; a fidelity benchmark's text (the KL measurement under another name)
        (f"{CLAIM}, measured on shard 3 of our held-out suite.\n", {}),
        (f"{CLAIM}. No task benchmarks were run: the one benchmark is a fidelity check against the BF16 logits "
         "on WikiText-2.\n", {"name": "wikitext-2"}),
    ],
)
def test_a_text_by_its_hub_id_option_or_suite_is_read(text, value):
    d = d3(text)
    assert d.status != "missing", d
    assert {k: v for k, v in d.value.items() if k in value} == value, d


@pytest.mark.parametrize(
    "text",
    [
        # a file a command writes, a run's results or a project document, a text tagged with another use
        f"{CLAIM} (`kld-bench --context 512 > runs/q4.txt`).\n",
        f"{CLAIM} (`kld-bench --context 512 | tee runs/q4.txt`).\n",
        f"{CLAIM}; per-chunk figures in `out/summary.txt`.\n",
        f"{CLAIM}; the run notes are in `notes/LANDED.txt`.\n",
        f"{CLAIM}. Measured on `someone/bad-asks` (refusals).\n",
        f"{CLAIM}, measured on `someone/Chatty-8B-Instruct` with llama.cpp.\n",  # a model's id, not a text's
        # a benchmark that is not of the logits' fidelity names another measurement's text
        f"{CLAIM}. No task benchmarks were run: the one benchmark is a check on WikiText-2.\n",
    ],
)
def test_output_result_files_and_other_uses_are_not_the_text(text):
    assert d3(text).status == "missing"


@pytest.mark.parametrize(
    ("text", "status"),
    [
        # a bare corpus or panel (an article, "same", a role or genre word) names no text: missing, not incomplete
        (f"{CLAIM} on the same corpus as before.\n", "missing"),
        (f"{CLAIM} on the published panel.\n", "missing"),
        (f"{CLAIM} on the evaluation corpus.\n", "missing"),
        # counted, it is told apart: incomplete (name and source still needed)
        (f"{CLAIM} on a reduced 16k KLD panel.\n", "incomplete"),
        (f"{CLAIM} on the 40-window panel.\n", "incomplete"),
        (f"{CLAIM} (held-out 32×1024 tok).\n", "incomplete"),
        (f"{CLAIM} over 4096 held-out tokens.\n", "incomplete"),
    ],
)
def test_a_bare_corpus_is_missing_a_counted_one_incomplete(text, status):
    assert reading(text, 3).status == status, reading(text, 3)


@pytest.mark.parametrize("text", [f"{CLAIM} on ptb.\n", f"{CLAIM} on code from the-stack-smol.\n", f"{CLAIM} on wiki-text 2.\n"])
def test_more_corpora_by_name(text):
    d = reading(text, 3)
    assert d.status == "incomplete" and d.value.get("name"), d


@pytest.mark.parametrize("name", ["bf16-rescore.txt", "q4_kld.txt", "run-metrics.jsonl"])
def test_a_results_file_is_no_text(name):
    assert reading(f"{CLAIM}; the figures are in `{name}`, measured as KLD.\n", 3).status == "missing"


def test_a_corpus_field_names_the_text_without_a_measuring_word():
    text = f"{CLAIM}.\n\n## Protocol\n\n- Corpus: `someone/chat-mix-v2` (HF dataset)\n- Windows: 64\n"
    d = reading(text, 3)
    assert d.status in ("stated", "incomplete") and d.value.get("name") == "someone/chat-mix-v2", d



@pytest.mark.parametrize(
    "text",
    [
        "The KLD of the edit is 0.07.\n\nA separate evaluation of the edited model (40 harmful-request prompts).\n",  # refusals
        "The max KLD is 2e-6 over the decoded positions.\n\nMeasured on rig2/gfx1100 with seeds 1-4.\n",  # a host and its GPU
    ],
)
def test_another_uses_prompts_or_a_machine_are_not_the_eval_text(text):
    assert reading(text, 3).status == "missing"


def test_counted_prompts_of_the_measurement_still_read():
    d = reading("The KLD is 0.07, measured over 40 chat prompts.\n", 3)
    assert d.status == "incomplete" and d.evidence


@pytest.mark.parametrize(
    "text",
    [
        "The mean KL is 0.012 nats/token over a finite text.\n",
        "On single prompts the KL of the 4-bit file is 0.08 bits.\n",
        "The KL stays at 0.03 over real text.\n",
    ],
)
def test_words_of_size_or_realness_tell_no_text_apart(text):
    assert reading(text, 3).status == "missing"


def test_a_described_text_after_on_still_reads():
    assert reading("The KL stays at 0.03 on the long RoPE-probing prompts.\n", 3).status == "incomplete"


def test_a_setup_line_over_a_kl_block_describes_its_text():
    text = "## Accuracy\n\n`Tiny-4bit`, tp=2, 16 prompts x 512 tokens:\n\n```\n        avg_kl_div   flips\nrun     0.000120     0/8192\n```\n"
    d = reading(text, 3)
    assert d.status == "incomplete" and d.evidence, d


def test_a_setup_line_without_a_kl_block_is_not_read():
    text = "The KLD is 0.0001.\n\nServing check, 16 prompts x 512 tokens:\n\n```\nrun  41 tok/s\n```\n"
    assert reading(text, 3).status == "missing"


# A run that says it used the counted texts describes the measurement's text though its sentence has no measuring
# word (holdout15/d carrier_payload_activation_compression "the runs use N varied prompts", holdout15/d fisher_graph
# "the campaign used N ... prompts": two authors).
def test_counted_texts_a_run_used_are_read():
    text = "## Setup\n\nThe sweeps use 24 mixed prompts, all short.\n\n## Results\n\nThe KLD of rank 16 is 0.031.\n"
    d = reading(text, 3)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize("setup", ["The dashboard shows 24 mixed prompts, all short.", "The warmup runs use 8 short prompts.",
                                   "The calibration run used 64 varied prompts."])
def test_counted_texts_used_by_something_else_are_not_read(setup):
    text = f"## Setup\n\n{setup}\n\n## Results\n\nThe KLD of rank 16 is 0.031.\n"
    assert reading(text, 3).status == "missing"


# A count of texts given among the run's sizes (tokens, positions, a context length) is the scored text's, though the
# sentence has no measuring word (holdout13/f enoch_kv_cache_ternary_sink "with 4 prompts, 256-token contexts",
# holdout13/a glm53_flash_exl3_one_gb10_tabbyapi_lane "four fixed prompts, 400 forced output tokens", holdout14/a
# gemma4nv_w12_fp8_lm_head header cell "22 hidden prompts, 3,550 positions": three authors).
@pytest.mark.parametrize(
    "text",
    [
        "The KLD of rank 16 is 0.031.\n\nThe second probe ran on a small model with 6 prompts, 512-token contexts and every layer.\n",
        "The KLD of rank 16 is 0.031.\n\n- Replay: five fixed prompts, 300 forced output tokens, one slot.\n",
        "| rank 16, 12 held-out prompts, 2,048 positions | base | tuned |\n|---|---:|---:|\n| KL vs the FP16 rows | 0.021 | 0.019 |\n",
    ],
)
def test_counted_texts_among_the_run_sizes_are_read(text):
    d = reading(text, 3)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "setup",
    [
        "The second probe ran on a small model with 6 prompts and every layer.",  # no size of the run beside the count
        "The speed probe ran 6 prompts, 512 tokens each, at 41 tok/s.",  # the prompts of a speed run
        # the calibration's texts and their length (holdout9/c godenheim, in Spanish)
        "Para calibrar se usaron 40 conversaciones de chat, de hasta 8K tokens.",
    ],
)
def test_counted_texts_without_a_run_size_or_in_a_speed_run_are_not_read(setup):
    assert reading(f"The KLD of rank 16 is 0.031.\n\n{setup}\n", 3).status == "missing"


# A JSON, PyTorch or NumPy file whose name says it holds a corpus, tokens, samples or data is the text as the
# run read it (holdout11/d ru_rwkv_quant_loo and holdout5/b rwkv_quant_readme "eval_corpus_multiling.pt", holdout13/b
# ollama_turboquant "testdata/..._tokens.json", holdout10/d sglang_qwen3_30b_a3b lora "compare_sample_train_data.pt").
@pytest.mark.parametrize("file", ["testdata/probe_run3_tokens.json", "shards/mixed_corpus_v2.pt", "bundle/replay_data.npz",
                                  # "spec" as a whole word only (review of round 20): a spectrum or inspection corpus is one
                                  "eval/spectrum_corpus.pt", "inspection_samples.json"])
def test_a_file_of_tokens_or_a_corpus_is_read(file):
    d = reading(f"{CLAIM}; the model reads `{file}` first.\n", 3)
    assert d.status != "missing" and d.evidence, d


@pytest.mark.parametrize("file", ["weights/embed_tokens_fp16.npy", "special_tokens_map.json", "run_metadata.json",
                                  "kl_results.json", "dataset_spec.json"])
def test_a_weight_tokenizer_spec_or_result_file_is_not_a_text(file):
    assert reading(f"{CLAIM}; the model reads `{file}` first.\n", 3).status == "missing"


def test_run_sizes_read_a_long_line_in_linear_time():
    """The words between a count and its unit are bounded (review of round 20: "1-" repeated took 0.5 s at 8,000
    characters and 1.5 s at 16,000 before): a line eight times as long must take about eight times as long, not
    thirty."""
    import time

    from kldcard.lint.read.eval_text_runs import RUN_SIZE

    def took(n):
        line = "1-" * n
        t0 = time.perf_counter()
        RUN_SIZE.search(line)
        return time.perf_counter() - t0

    small, large = took(1000), took(8000)
    assert large < 12 * small + 0.05


@pytest.mark.parametrize(("spelling", "sample"), eval_text_units.TASK_SUITE_SAMPLES, ids=lambda x: x)
def test_each_task_suite_matches_its_sample_and_its_prompts_are_the_text(spelling, sample):
    assert re.fullmatch(spelling, sample, re.IGNORECASE)
    d = reading(f"Mean KLD vs BF16 on the {sample} prompts: 0.012 nats.\n", 3)
    assert d.status != "missing" and any(sample in e.text for e in d.evidence), d
    # and a score on the suite beside a KLD is the benchmark's, not a second KLD (claims_patterns.OTHER_METRIC)
    assert claims(f"KLD vs BF16 0.004, {sample} 0.81.\n") == [(1, ["0.004"])]



@pytest.mark.parametrize(
    "text",
    [
        "Mean KLD vs BF16 0.012 nats, measured on 10,240 positions of a text that was not used for quantization.\n",
        "KLD media frente a BF16: 0,012, en 10.240 posiciones de un texto que no entró en la cuantización.\n",
        "Mean KLD vs BF16 0.012 nats on 15,065 assistant tokens of a chat set.\n",
        "Mean KLD vs BF16 0.012 nats (10 paired samples).\n",
    ],
)
def test_a_text_described_by_the_count_of_its_scored_positions_is_incomplete(text):
    assert reading(text, 3).status == "incomplete"


def test_positions_of_the_context_are_no_text():
    text = "Mean KLD vs BF16 0.012 nats; the model keeps 4,096 positions of the context set aside.\n"
    assert reading(text, 3).status == "missing"


def test_positions_of_each_text_are_a_count_per_text_not_the_text():
    assert reading("Mean KLD vs BF16 0.012 nats, scoring 256 positions of each text.\n", 3).status == "missing"


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Mit Rotation sinkt die KLD um ca. 30 % gegenüber BF16.", 1),  # an abbreviation before an amount
        ("Mean KLD is Approx. 0.012 nats against BF16.", 1),  # whatever its case
        ("Create a fresh conda env. Then run the KLD script.", 2),  # not before an amount: a sentence ends
    ],
)
def test_an_abbreviation_ends_no_sentence_only_before_an_amount(text, sentences):
    c = parse_card(text.encode(), "README.md")
    assert len(scan(c.body, c.body_line).sentences) == sentences
