"""Key-value lines as KLD claims (kldcard.lint.read.key_values): a KL metric's name with its one value, on two
lines (a flattened metric widget, a bound reported as the result) or on one line in pasted output. Texts in the
project's own words; the look-alikes beside them stay silent."""

from __future__ import annotations

import pytest

from helpers_reading import claims


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Model facts\n\nKL divergence\n\n<0.02\n\nRefusal rate\n\n3/100\n", [(5, ["0.02"])]),
        ("Scores\n\n**Mean KLD**\n0.0071 nats\n", [(4, ["0.0071"])]),
        ("```\nsame argmax            60 / 64\nmax KL(FP16 || Q6)     0.0213\n```\n", [(3, ["0.0213"])]),
    ],
)
def test_a_kl_name_with_its_one_value_is_a_claim(text, found):
    assert claims(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "Training\n\nKL penalty\n\n0.1\n",  # a training setting, not a KL name
        "## KL divergence\n\n2\n",  # a heading above a section
        "KL divergence\n\nsee the table below for 4 runs\n",  # the next line is prose
        "```\nkl_coef     0.05\n```\n",  # a coefficient
    ],
)
def test_lookalikes_are_not_claims(text):
    assert claims(text) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("quant,size_gb,mean_kld,ppl\nQ4_K_M,4.1,0.0213,7.02\nQ8_0,7.9,0.0011,6.95\n", [(1, ["0.0213", "0.0011"])]),
        # a file whose trailing columns the page cut off, and a quoted comma in the header
        ('name,"bits, avg",KLD p99,x,y,z\nq3,3.5,0.41,1,2\n', [(1, ["0.41"])]),
    ],
)
def test_a_csv_kl_column_is_a_claim(text, found):
    assert claims(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "We compared KL, perplexity, and speed\nacross runs, then picked one, twice\n",  # prose with commas
        "step,kl_penalty,reward\n1,0.1,0.5\n",  # a training log's KL penalty
        "model,KLD,notes\nq4,n/a,not measured\n",  # no value in the KL column
    ],
)
def test_csv_lookalikes_are_not_claims(text):
    assert claims(text) == []


def test_an_indented_header_over_unheaded_row_labels_is_a_table():
    text = "```\n                 mean_kld   same argmax\ngreedy           0.000000   512/512\nreuse            0.000013\n```\n"
    assert claims(text) == [(2, ["0.000000", "0.000013"])]


@pytest.mark.parametrize(
    "text",
    [
        "```\n                 kl_penalty   reward\nstep1            0.100000     0.5\n```\n",  # a training setting
        "```\n                 mean_kld   notes\ngreedy           n/a        skipped\n```\n",  # no value under the KL column
        "    KL divergence  is read below\nnot a row at all\n",  # an indented sentence
    ],
)
def test_indented_lookalikes_are_not_tables(text):
    assert claims(text) == []


def test_flattened_rows_of_counts_and_percentages_beside_one_kl_value_are_rows():
    text = "split tokens mean KLD top-1 match\nshort 12,400 0.0213 91.20%\nlong 30,050 0.0870 88.02%\n"
    assert [line for line, _ in claims(text)] == [1]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        # a one-row table of metrics has no label column
        ("refusals agreement KL divergence runs\n3% 97% 0.0412 150\n", ["0.0412"]),
        # a label of several words, then counts, a fraction and a size beside the one KL value
        ("build experts kept size KL vs BF16\nsmall (this) 96 / 128 41 GB 0.218\nlarge 128 / 128 55 GB 0.104\n", ["0.218", "0.104"]),
        # the reference row holds placeholders where the others hold values; sizes are no KL values
        ("quant size median KLD top match\nq8 30.4 GB baseline baseline\nq4 17.4 GB 0.132 74.2%\nq3 13.0 GB 0.201 70.5%\n",
         ["0.132", "0.201"]),
    ],
)
def test_flattened_rows_with_one_kl_value_beside_counts_fractions_and_sizes(text, numbers):
    assert claims(text) == [(1, numbers)]


@pytest.mark.parametrize(
    "text",
    [
        "split tokens mean KLD top-1 match\nshort 12,400 tokens were read\n",  # words after the label
        "split tokens mean KLD top-1 match\n12,400 tokens and then 0.0213\n",  # words inside the values
    ],
)
def test_rows_that_are_not_label_then_numbers_are_not_read(text):
    assert claims(text) == []
