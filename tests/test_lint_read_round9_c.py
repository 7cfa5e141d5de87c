"""Readings changed in issue 28's ninth tuning round (tune9-c): "teacher-forced" names how the context was fed, a mode,
and is evidence of the scored positions (D6) only with a count of what was forced or scored near it; a count written
with the mode between ("24,262 teacher-forced steps") is read as a count. Each form has a look-alike next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


@pytest.mark.parametrize(
    "text",
    [
        "| metric | Q4 | Q5 |\n|---|---|---|\n| KLD vs BF16: teacher-forced · decode-path | 0.0231 · 0.0290 | 0.0190 · 0.0242 |\n",
        f"{CLAIM} vs BF16. The scoring is teacher-forced, so the quant always sees the reference's context.\n",
        "Outer scale on: teacher-forced KLD 0.184 → 0.152 against BF16 over 5 fresh boots.\n",
    ],
)
def test_teacher_forcing_alone_is_a_mode_not_positions(text):
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16, teacher-forced over 1,200 continuation tokens of our chat set.\n",
        f"{CLAIM} vs BF16 (teacher-forced).\n\nEach run scores 64 targets per prompt.\n",
        f"{CLAIM} vs BF16. Both paths were compared teacher-forced on the same greedy continuation.\n\n"
        "```\nPositions checked: 128\n```\n",
        f"{CLAIM} vs BF16, teacher-forced; the maximum is taken over the decoded\npositions of each prompt.\n",
    ],
)
def test_teacher_forcing_with_a_count_near_it_is_read(text):
    assert reading(text, 6).status != "missing"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        (f"{CLAIM} vs BF16, averaged over 24,262 teacher-forced steps.\n", 24262),
        (f"{CLAIM} vs BF16 over 96 teacher-forced frames of speech tokens.\n", 96),
        ("整模 16 个相同 teacher-forced 前缀中，平均 KL=0.0231。\n", 16),
    ],
)
def test_a_count_of_teacher_forced_units_is_a_count_of_positions(text, count):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


def test_a_rate_per_tokens_far_away_is_no_count_for_the_mode():
    text = (f"{CLAIM} vs BF16. The scoring is teacher-forced: each step sees the reference's context.\n"
            + "Other notes follow.\n" * 12 + "The quant flips 0.24 answers per 1,000 tokens.\n")
    assert reading(text, 6).status == "missing"


def test_a_japanese_comparison_word_makes_a_range_of_positions_a_measurement():
    text = "KLD は 0.0231。\n\n- 比べるのは decode position 4..66。\n"
    assert reading(text, 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "La KLD media es 0,0231 frente a BF16. Para la calibracion se usan ventanas de 4096 tokens y semillas fijas.\n",
        "A KLD média é 0,0231 contra BF16. Na calibração usamos janelas de 4096 tokens.\n",
    ],
)
def test_windows_of_a_calibration_in_a_card_language_are_no_context(text):
    assert reading(text, 5).status == "missing"


def test_windows_of_the_measurement_beside_calibration_are_still_read():
    text = "La KLD media es 0,0231 frente a BF16. La KLD se midio con ventanas de 4096 tokens, sin datos de calibracion.\n"
    assert reading(text, 5).status != "missing"


SCRIPT = (
    "# KL of each KV type vs f16 (mean KLD 0.0231 for q8_0)\n"
    'TEXT = os.path.join(ROOT, "calib_mix.txt")\n'
    'ARGS = ["-m", MODEL, "{opt}", TEXT, "-c", "2048", "--kl-divergence"]\n'
)


def test_a_calibration_named_file_passed_by_variable_to_the_evaluation_is_no_calibration():
    assert reading(SCRIPT.format(opt="-f"), 4).status == "missing"


def test_a_calibration_named_file_not_passed_to_the_evaluation_is_still_read():
    assert reading(SCRIPT.format(opt="--imatrix-out"), 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Tras la abliteracion la KL es de 0,0231; las negativas bajan a 9 sobre 100 prompts.\n",
        "Après l'abliteration la KL vaut 0,0231 ; les refus tombent à 9 sur 100 prompts.\n",
    ],
)
def test_a_result_counted_over_part_of_the_prompts_in_a_card_language_names_no_text(text):
    assert reading(text, 3).status == "missing"


def test_a_plain_count_of_prompts_in_a_card_language_still_describes_the_text():
    assert reading("La KL media es 0,0231 frente a BF16, medida sobre 100 prompts de chat.\n", 3).status != "missing"
