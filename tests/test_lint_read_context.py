"""D5, the context length, as cards write it beyond the main patterns (kldcard.lint.read.context):
thousands separators, windows × length, short forms, the card languages; and what is a model's or a
deployment's context, not the measurement's."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


@pytest.mark.parametrize(
    ("text", "value", "status"),
    [
        (f"{CLAIM} over 4 × 2,048 tokens.\n", {"n_ctx": 2048, "chunks": 4}, "stated"),
        (f"{CLAIM} over 10 x 2,048 WikiText tokens.\n", {"n_ctx": 2048, "chunks": 10}, "stated"),
        (f"{CLAIM}, computed over 64 chunks × 512.\n", {"n_ctx": 512, "chunks": 64}, "stated"),
        (f"{CLAIM}, 64 chunks x 512, over 16,376 predicted tokens.\n", {"n_ctx": 512, "chunks": 64}, "stated"),  # a comma after
        (f"{CLAIM} (`slice.txt`, n_ctx 384, 6 chunks).\n", {"n_ctx": 384, "chunks": 6}, "stated"),  # "384," is no count
        (f"{CLAIM} (openwebtext 8x2048).\n", {"n_ctx": 2048, "chunks": 8}, "stated"),
        (f"{CLAIM} on the 5,120-context population.\n", {"n_ctx": 5120}, "incomplete"),
        (f"{CLAIM}; the run takes the first 2,048 tokens of the text and scores every position.\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM} (prefill chunk 2048).\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM} (protocol `c512`, 580 chunks).\n", {"n_ctx": 512}, "stated"),
        (f"{CLAIM} with max_length=1024.\n", {"n_ctx": 1024}, "incomplete"),
        (f"{CLAIM} (`kld-eval --seq-len 4096`).\n", {"n_ctx": 4096}, "incomplete"),
        ("Q4_K_M 的平均 KLD 为 0.0231，上下文长度 4096。\n", {"n_ctx": 4096}, "incomplete"),
        (f"{CLAIM}。コンテキスト長 2048 で測定。\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM}.\n\n| Parámetro | Valor |\n|---|---|\n| Longitud de contexto | 4096 tokens |\n", {"n_ctx": 4096}, "incomplete"),
        # a CJK full stop ends the sentence: the calibration run's "250×2048" does not veto the scoring's context
        ("平均KLDは0.0231、context2048。imatrixはcalibration250×2048。\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM} (first KLD measurement, 32K context).\n", {"n_ctx": 32768}, "incomplete"),
        (f"{CLAIM} at 4k context.\n", {"n_ctx": 4096}, "incomplete"),
        (f"{CLAIM} at contexts of 512, 2048 and 8192 tokens.\n", {"n_ctx": 512}, "incomplete"),
        (f"{CLAIM}, sequence length of 2048.\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM}, window size 1024.\n", {"n_ctx": 1024}, "incomplete"),
        (f"{CLAIM} at a context length of 4,096 tokens.\n", {"n_ctx": 4096}, "incomplete"),
        (f"{CLAIM} with n_ctx = 4,096.\n", {"n_ctx": 4096}, "incomplete"),
        (f"{CLAIM}, ctx-size 4096.\n", {"n_ctx": 4096}, "incomplete"),
        (f"{CLAIM} over 8K-token windows.\n", {"n_ctx": 8192}, "incomplete"),  # a length, not 8 windows
        (f"{CLAIM}; each sequence is 1024 tokens long.\n", {"n_ctx": 1024}, "incomplete"),
        (f"{CLAIM}; windows are 2048 tokens.\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM} at 512/2048/8192 context.\n", {"n_ctx": 512}, "incomplete"),
        # a table's context column, or a settings table's context row
        ("| Quant | ctx | Mean KLD |\n|---|---|---|\n| Q4_K_M | 512 | 0.0231 |\n", {"n_ctx": 512}, "incomplete"),
        ("| Quant | Mean KLD | n_ctx | chunks |\n|---|---|---|---|\n| Q4_K_M | 0.0231 | 2,048 | 40 |\n", {"n_ctx": 2048}, "incomplete"),
        (f"{CLAIM}.\n\n| Setting | Value |\n|---|---|\n| Context length | 4096 |\n", {"n_ctx": 4096}, "incomplete"),
    ],
)
def test_context_forms_are_read_with_their_value(text, value, status):
    d = reading(text, 5)
    assert (d.status, {k: v for k, v in d.value.items() if k in value}) == (status, value), d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}.\n\nRefusal rate: 49/100\n\nContext notes follow below.\n",  # a number of the paragraph before
        f"{CLAIM}.\n\n- **262K context**\n- Apache-2.0\n",  # the model's window
        f"{CLAIM}.\n\nDeployed as a daily default (Q4_K_M, 96k context).\n",
        f"{CLAIM}.\n\n- Engine: llama.cpp b6510, context 163840\n",
        f"{CLAIM} on 3x3090 GPUs.\n",  # a GPU count, not windows × length
        f"{CLAIM}.\n\nThe vision tower was scored greedily over 10 held-out 768×768 images.\n",  # a resolution
        f"{CLAIM}; see chunk 17 of the log.\n",  # a chunk's index
        f"{CLAIM}; the KV cache uses block size 100.\n",  # not a window length (no multiple of 64)
        f"{CLAIM}.\n\n- **Context.** Most GGUFs are scored with 512 context windows.\n",  # a convention, not this run
        # a spec table's context column, without a measurement in its header
        f"{CLAIM}.\n\n| Model | Params | Context |\n|---|---|---|\n| Q4_K_M | 8B | 4096 |\n",
    ],
)
def test_what_is_not_the_measurements_context_is_missing(text):
    assert reading(text, 5).status == "missing"


def test_a_long_run_of_lengths_is_read_in_linear_time():
    """A list of lengths is at most eight items: a run of thousands ("2048/2048/...", "100,100,...") is read
    as fast as its size, not in quadratic or exponential time (a backtracking alternation)."""
    import time

    def cost(n: int) -> float:
        text = f"{CLAIM}. " + "2048/" * n + " and " + ",".join(["100"] * n) + " tokens\n"
        start = time.perf_counter()
        reading(text, 5)
        return time.perf_counter() - start

    cost(50)  # warm the patterns
    small, large = cost(400), cost(4000)
    assert large < 30 * small + 0.05, (small, large)


PERPLEXITY_RUN = "Perplexity over 32 × 4096 tokens of wikitext, base vs patched.\n\nThe patch gives a KLD of 0.0086.\n"


def test_a_perplexity_runs_windows_are_its_own_unless_one_tool_scores_both():
    # no tool that scores PPL and KLD in one run: the perplexity's windows are not the KLD's
    assert reading(PERPLEXITY_RUN, 5).status == "missing"
    assert reading(PERPLEXITY_RUN, 6).status == "missing"
    # llama-perplexity scores both over the same chunks: its perplexity windows are the KLD's
    both = PERPLEXITY_RUN + "\n`llama-perplexity --kl-divergence` printed: Mean KLD: 0.0086\n"
    assert reading(both, 5).value.get("n_ctx") == 4096


@pytest.mark.parametrize(
    ("serving", "n_ctx"),
    [
        ("llama-server -m q.gguf -c 65536 -np 1\n", 512),  # the deployment's context: the tool's default stays
        ("-c 65536 -ctk q8_0 -ctv q8_0 -np 1\n", 512),
        ("./llama-perplexity -m q.gguf -f wiki.test.raw -c 2048 --kl-divergence\n", 2048),  # the measurement's
    ],
)
def test_a_serving_command_lines_context_is_not_llama_perplexitys(serving, n_ctx):
    text = f"Tested with llama-perplexity on wiki.test.raw: Mean KLD 0.0231.\n\n```\n{serving}```\n"
    d = reading(text, 5)
    assert d.value.get("n_ctx") == n_ctx, d


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        # a length before the scored unit, a label or a word between
        (f"{CLAIM} over the whole 2,048-token `panel-07` window.\n", 2048),
        (f"{CLAIM} on a ~500-token long prompt.\n", 500),
        (f"{CLAIM}, three 1024-token captures.\n", 1024),
        # windows of a length in the card languages; "long context" in Japanese, in k
        (f"{CLAIM} (128 fragmentos de 2.048 tokens).\n", 2048),
        ("Q4_K_M の長文脈 (16k) での KLD は 0.0231。\n", 16384),
    ],
)
def test_a_length_before_what_was_scored_is_read(text, n_ctx):
    d = reading(text, 5)
    assert (d.status, d.value.get("n_ctx")) == ("incomplete", n_ctx), d


@pytest.mark.parametrize(
    "text",
    [
        # a model's context cut at its thousands separator by the short patterns ("context: 131" of "131,072")
        f"{CLAIM}.\n\n- Vocabulary: 151,936 tokens, max context: 131,072 tokens\n",
        f"{CLAIM}.\n\n- Context length: 131,072 natively\n",
        f"{CLAIM}.\n\n| Campo | Valor |\n|---|---|\n| Longitud de contexto | 131 072 tokens |\n",
    ],
)
def test_a_long_context_written_with_separators_is_the_models(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        (f"{CLAIM}, over 128 contiguous 512-ctx chunks of the test file.\n", 512),  # a compound with "ctx"
        (f"{CLAIM}.\n\n```\npython eval_kl.py --seqlen 2048 --nsamples 64\n```\n", 2048),  # an evaluating tool's option
        (f"{CLAIM} (n_ctx: 4k, 32 chunks).\n", 4096),
        (f"{CLAIM}, measured at ctx 8k.\n", 8192),  # k after the label
        ("Q4_K_M の KLD は 0.0231 (4096 トークンのコンテキストで測定)。\n", 4096),  # the number before the word
        ("Q4_K_M 的 KLD 为 0.0231，在 4K 上下文下测得。\n", 4096),
        ("Q4_K_M 的 KLD 为 0.0231，序列长度 2048。\n", 2048),  # sequence length, Chinese
        ("La KLD de Q4_K_M es 0,0231, con longitud de secuencia 1024.\n", 1024),  # Spanish
        ("Die KLD von Q4_K_M beträgt 0,0231 bei einer Sequenzlänge von 2048.\n", 2048),  # German
        (f"{CLAIM}, averaged over 64 2048-token samples.\n", 2048),  # a unit of scored text
        (f"{CLAIM} on sequences of length 1024.\n", 1024),
        ("Q4_K_M 的 KLD 为 0.0231，上下文长度为 4096。\n", 4096),  # a particle between
        ("Q4_K_M の KLD は 0.0231、コンテキスト長は2048。\n", 2048),
        ("KLD для Q4_K_M равна 0,0231 с контекстом 4096.\n", 4096),  # Russian, instrumental case
    ],
)
def test_more_written_forms_of_the_context_are_read(text, n_ctx):
    d = reading(text, 5)
    assert d.status in ("stated", "incomplete") and d.value.get("n_ctx") == n_ctx, d


@pytest.mark.parametrize(
    "text",
    [
        "Q4_K_M 的 KLD 为 0.0231。在 3.5K 上下文下预填充 580 tok/s。\n",  # a speed run's context
        "Q4_K_M 的 KLD 为 0.0231，128K 上下文下的分数尚未测量。\n",  # not measured at that length
        f"{CLAIM}, instead of the usual wiki/512-ctx setup.\n",  # a convention named, not this run
        f"## Results\n\n{CLAIM}.\n\n### Calibration run\n\n| Item | Value |\n|---|---|\n| windows | 534 (window=1024, stride=1024) |\n",
    ],
)
def test_a_written_context_that_is_not_the_measurements_is_missing(text):
    assert reading(text, 5).status == "missing", reading(text, 5)
