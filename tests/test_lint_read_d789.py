"""D7-D9 recognisers (kldcard.lint.read.direction, .vocabulary, .aggregation): the direction, vocabulary and
statistic as cards write them, read from short texts in the project's own words."""

from __future__ import annotations

import pytest
from helpers_reading import reading as first_reading

from kldcard.card.document import parse_card
from kldcard.lint.reader import read_card

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


def reading(text: str, n: int, claim: str = CLAIM):
    return first_reading(claim + text, n)


# ---- D7 direction -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("Scored as KLD(BF16-teacher ‖ quant) over the panel.\n", "forward"),
        ("We report KL-div(p_ref ‖ p_q) per token.\n", "forward"),
        ("The divergence is D_KL[p_q || p_ref] here.\n", "reverse"),
        ("The number is KL(base→quant), summed over the vocabulary.\n", "forward"),
        ("Divergence runs from the reference to the quantized model.\n", "forward"),
        ("Distilled teacher → student, KL per position.\n", "forward"),
        ("Code: `F.kl_div(log_q, log_p, log_target=True)`.\n", "forward"),
        ("Code: `torch.nn.functional.kl_div(log_p_ref, log_q)`.\n", "reverse"),
        ("KL is the mean of log p_official(t) - log p_arm(t) along the text.\n", "forward"),
        ("It is mean(target_logprob − baseline_logprob) over the tokens.\n", "reverse"),
        ("我们报告正向KL。\n", "forward"),
        ("逆KLで評価した。\n", "reverse"),
        ("Se usa la divergencia KL directa.\n", "forward"),
        ("On mesure la KL inverse.\n", "reverse"),
        ("Gemessen wird die Vorwärts-KL.\n", "forward"),
        ("Reported as reverse KLD throughout.\n", "reverse"),
    ],
)
def test_direction_notations_are_read(text, direction):
    d = reading(text, 7)
    assert d.status == "stated" and d.value["direction"] == direction, d


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | KLD (O6, test 3) |\n|---|---|\n| a | 0.1 |\n",  # a label in parentheses, not a formula
        "The table gives the KL divergence (BF16 → AWQ) per file.\n",  # one arrow after a name: ambiguous
        "Training used a KL(policy ‖ reference) penalty.\n",  # a training objective
    ],
)
def test_direction_lookalikes_are_not_read(text):
    assert reading(text, 7).status == "missing"


# ---- D8 vocabulary ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The top-4096 comparison keeps most of the mass.\n", {"scheme": "top-k", "k": 4096}),
        ("Divergence over the top 100 tokens of the reference.\n", {"scheme": "top-k", "k": 100}),
        ("Scored with `--score-topk 64 --context 8192`.\n", {"scheme": "top-k", "k": 64}),
        ("Both sides are truncated to the top 20 before the sum.\n", {"scheme": "top-k", "k": 20}),
        ("The tensor holds logits, shape `[2047, 154880]`.\n", {"scheme": "full"}),
        ("Vocab size 151,936 on both sides.\n", {"scheme": "full"}),
        ("Each token's logprob is recorded by forced decoding.\n", {"scheme": "sampled-token"}),
        ("上位100トークンで計算した。\n", {"scheme": "top-k", "k": 100}),
        ("The sum runs over the entire vocabulary.\n", {"scheme": "full"}),
    ],
)
def test_vocabulary_statements_are_read(text, value):
    d = reading(text, 8)
    assert d.status == "stated" and d.value == value, d


@pytest.mark.parametrize(
    "text",
    [
        "Greedy output matched, with all top-10 tokens matching too.\n",  # an agreement metric
        "Top-5 overlap was 4.1 of 5.\n",
        "Sampling used `--top-k 40` for the chat demo.\n",  # a sampler's option
        "The image is `[1024, 76800]` pixels wide.\n",  # a shape, not the logits'
    ],
)
def test_vocabulary_lookalikes_are_not_read(text):
    assert reading(text, 8).status == "missing"


# ---- D9 aggregation ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "KL is the mean per-token log-ratio along each reply.\n",
        "Gen KLD is mean(target_logprob - baseline_logprob) over the generated text.\n",
        "The 中央値 is given for each quant.\n",
        "Values are given as mean ± SE over windows.\n",
        "Se da el promedio de la KLD por token.\n",
    ],
)
def test_statistic_words_apart_from_the_term_are_read(text):
    d = reading(text, 9)
    assert d.status != "missing" and d.evidence, d


def test_an_interval_by_its_letters_is_the_uncertainty():
    claim = "| Check | off | on |\n|---|---|---|\n| KLD vs FP8 | 0.0713 | 0.0752 (+5.5 %, CI +4.5 to +6.6) |\n"
    d = read_card(parse_card(claim.encode(), "README.md"))[0].disclosures[9]
    assert d.status != "missing", d


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | pass@1 | median | KLD |\n|---|---|---|---|\n| a | 0.5 | 12 s | 0.0100 |\n",  # the duration's median
        "Speed: 0.79 +/- 0.02 tok/s (SEM).\n",  # a speed's standard error
        "No significance test was run (bootstrap).\n",  # a test not run
    ],
)
def test_other_metrics_statistics_are_not_read(text):
    rs = read_card(parse_card((CLAIM + text).encode(), "README.md"))
    assert all(r.disclosures[9].status == "missing" for r in rs), rs


def test_statistic_of_the_numbers_is_the_claims_aggregation():
    # a transposed table: the "KLD" section row, then a row labelled by its statistic
    card = "| Measurement | A | B |\n|---|---|---|\n| Mean KLD | 0.691 | 0.933 |\n"
    assert read_card(parse_card(card.encode(), "README.md"))[0].disclosures[9].value["statistic"] == "mean"
    note = "| metric | value | note |\n|---|---|---|\n| **KLD vs F16** | 0,0023 | bits/token moyen |\n"
    d = read_card(parse_card(note.encode(), "README.md"))[0].disclosures[9]
    assert d.status == "stated" and d.value["statistic"] == "mean", d


def test_a_bare_plus_minus_is_no_statistic():
    # R6: "±" next to an unlabelled KLD column says nothing about the statistic
    card = "| Quant | KLD |\n|---|---|\n| Q4_K_M | 0.0231 ± 0.0004 |\n"
    assert read_card(parse_card(card.encode(), "README.md"))[0].disclosures[9].status == "missing"


def test_direction_from_a_model_index_metric_name():
    card = (
        "---\nmodel-index:\n- name: m\n  results:\n  - task: {type: text-generation}\n    dataset: {type: org/set, name: set}\n"
        "    metrics:\n    - {type: kl_divergence, name: \"mean KL(p_ref ‖ p_q), all rows\", value: 0.017}\n---\n"
        "The mean KL divergence is 0.017.\n"
    )
    d = read_card(parse_card(card.encode(), "README.md"))[0].disclosures[7]
    assert d.status == "stated" and d.value["direction"] == "forward" and d.evidence[0].key.endswith("/name"), d


# ---- claim kinds (kldcard.lint.read.claim_terms, numbers) ----------------------------------------------
def claim_lines(text: str) -> list[int]:
    from kldcard.lint.claims import find_claims
    from kldcard.lint.markdown import scan

    doc = scan(text, 1)
    return sorted({doc.position(c.offset)[0] for c in find_claims(doc)})


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("Setup.\n\nThe checker prints `max_kl_div` as 2.4e-05 on short prompts.\n", [3]),
        ("| Engine | mean_kld nats |\n|---|---|\n| a | 0.021 |\n", [1]),
        ("| ctx | KLD_95 |\n|---|---|\n| 512 | 0.1287 |\n", [1]),
        ("The KLD runs show it.\n\nThe new mix has 22% lower KLD than the old one.\n", [3]),
        ("KLD tables follow.\n\nIt lands at 1.66× lower divergence than the FP8 release.\n", [3]),
        ("Resumen del KLD.\n\nLa línea nueva da un 69 % menos KLD.\n", [3]),
        ("Engine notes.\n\nSGLang gives 0.021 nats of mean KL drift on this model.\n", [3]),
        ("Two CPU dumps are apart by a mean KLD of about 4e-5 nat.\n", [1]),
        # a table whose separator row has "+" at its joints (psql, org-mode)
        ("| Quant | PPL | KLD |\n|------+-----+-----|\n| q8_0 | 6.23 | 0.000743 ± 0.000003 |\n", [1]),
        # a table of prose rows: a KLD row, and a later row whose sentence gives a KLD number
        ("| date | topic | result |\n|---|---|---|\n| 09-18 | MXFP8 KLD gap | mean KLD 0.0459 to 0.0178 |\n"
         "| 09-20 | new reference | measured, its BF16 KLD is 0.12529 |\n", [3, 4]),
        # a measured value checked against a gate is a measurement; the gate's number is not one
        ("The port passes: max KL divergence = 3.7e-03 against the 0.1 threshold.\n", [1]),
        # a relative measurement wrapped over two lines; a share of a KL quantity
        ("The allocator cut KLD by 11.9% on the short window and by\n7.7% on the long panel.\n", [1, 2]),
        ("KLD notes.\n\nThe predictor closes 61% of the KLD gap between the two mixes.\n", [3]),
        ("Do not read a trend into this. The matched KL is an **unstable\nestimator**: it is 0.031 here but 0.325 at n=250.\n", [2]),
        # a comparison or another statistic of the same measurement carries the KLD on to the next number
        ("The larger file is worse here (KLD 0.979\nagainst 0.491) at its size.\n", [1, 2]),
        ("Mean KL to the teacher falls from 0.019\nto 0.017 with the bigger backbone.\n", [1, 2]),
        # a sentence wrapped after its KL term is prose, not a flattened table: the claim is the number's line
        ("The paired bootstrap interval of the KL delta is\n**[+0.2957, +0.4025] nats/token**, far from zero.\n", [2]),
    ],
)
def test_claim_kinds_are_found(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "The checker asserts equal logits (`--max_kl_div=0.03`).\n",  # a threshold given to a tool
        "| Mean KLD | Reads as |\n|---|---|\n| 1e-3 to 5e-3 | very near |\n| > 1e-1 | far |\n",  # a scale of bands
        "Training used lr 1e-5 and a KL penalty.\n",
        "The port must keep KL below a 0.03 threshold on every prompt.\n",  # a gate, no measurement
    ],
)
def test_claim_kind_lookalikes_are_not_claims(text):
    assert claim_lines(text) == []


def test_a_kld_section_row_then_statistic_rows_is_one_claim():
    # R1: a value-less "KLD" row, then rows labelled by their statistic; the claim is the first of them
    card = "Measurement | A | B |\n---|---|---|\nSize (GB) | 26.3 | 24.6 |\nKLD | | |\nMean | 0.691 | 0.933 |\n99.9% | 9.91 | 10.8 |\nNotes | x | y |\n"
    assert claim_lines(card) == [5]
    d = read_card(parse_card(card.encode(), "README.md"))[0]
    assert [n.statistic for n in d.numbers] == ["mean", "mean", "p99.9", "p99.9"] and d.disclosures[9].status == "stated"


def test_a_table_whose_label_column_names_kld_is_read_transposed():
    # R1: the header row names KLD first (its claim line); the rows are statistics, the columns candidates
    card = "| Model-12B, KLD vs BF16 | Q8 | Q4 |\n|---|---|---|\n| Mean KLD | 0.184 | 0.915 |\n| Median KLD | 0.020 | 0.312 |\n"
    assert claim_lines(card) == [1]
    r = read_card(parse_card(card.encode(), "README.md"))[0]
    assert [(n.candidate, n.statistic) for n in r.numbers] == [("Q8", "mean"), ("Q4", "mean"), ("Q8", "median"), ("Q4", "median")]


def test_a_number_after_another_metric_is_not_chained():
    assert claim_lines("The quant has KLD 0.0123 and\nagainst that a PPL of 6.51 on the text.\n") == [1]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The KL is approximated with top-K 256 of the teacher.\n", {"scheme": "top-k", "k": 256}),
        ("Scored with `kl_eval --top-k 16 --ctx-size 4096`.\n", {"scheme": "top-k", "k": 16}),
        ("固定64位置の全vocab logitsで比較した。\n", {"scheme": "full"}),
        ("La KL se calcula sobre todo el vocabulario.\n", {"scheme": "full"}),
        ("The KL runs over every vocabulary token, on the full softmax.\n", {"scheme": "full"}),
        ("The KL uses a top-64 approximation with the residual mass lumped.\n", {"scheme": "top-k", "k": 64}),
        ("The KL uses the 20 most likely tokens of the teacher.\n", {"scheme": "top-k", "k": 20}),
    ],
)
def test_top_k_written_after_the_word_and_the_whole_vocabulary_in_other_words(text, value):
    d = reading(text, 8)
    assert d.status != "missing" and d.value == value, d


@pytest.mark.parametrize(
    "text",
    [
        "Generation used temperature 0.7 and top-k 40.\n",  # a sampler's top-k
        "Sparse attention keeps top-k 2,048 keys per query.\n",  # an architecture's
        "The top-1 comparison agrees on 97 % of tokens.\n",  # an agreement
        "The recipe `q3floor_topk20` puts Q4 on the top-k 20 layers.\n",  # a recipe's name, a count of layers
    ],
)
def test_sampler_architecture_and_agreement_top_k_are_not_the_vocabulary(text):
    assert reading(text, 8).status == "missing", reading(text, 8)


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        # kldcard.lint.read.direction_forms: the weighting side is P, roles named as P, "of Q from P", symmetric, CJK brackets
        ("Per token we sum_v p_ref(v) log(p_ref(v)/p_q(v)).\n", "forward"),
        ("The KL's expectation is taken under the reference distribution.\n", "forward"),
        ("We write the KL with the quant as P and the reference as Q.\n", "reverse"),
        ("KL with P = BF16 model, Q = Q4 model.\n", "forward"),
        ("It is the KL divergence of the quant from the reference.\n", "forward"),
        ("We report a symmetric KL (average of both directions).\n", "symmetric"),
        ("KL散度（参考‖量化）按 token 平均。\n", "forward"),
    ],
)
def test_definitions_of_the_direction_are_read(text, direction):
    d = reading(text, 7)
    assert d.status == "stated" and d.value.get("direction") == direction, d


def test_a_probability_named_p_is_no_direction():
    assert reading("Sampling used P = 0.9 nucleus mass.\n", 7).status == "missing"
