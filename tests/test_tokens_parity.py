"""Token parity with real tokenizers (Qwen3, Llama 3, Gemma 3) across transformers, llama.cpp and
mlx-lm: identical ids where the engines agree; missing BOS, double BOS, special-token parsing and
chat-template differences detected and named."""

from __future__ import annotations

import pytest
from helpers_tokens import (
    CHATML_BLANK_LINE,
    CONVERSATION,
    CORPUS,
    tokenizer,
    trio,
    vocab_gguf,
)

from kldcard.demo.tiny_models import fetch_tokenizer
from kldcard.errors import InputError, TokenMismatch
from kldcard.schema import TokenizerParity
from kldcard.tokens import (
    check_chat_parity,
    check_parity,
    parity_for_capture,
    read_conversation,
    read_text,
)

pytestmark = pytest.mark.engines

# Corpus files on which all three engines agree under their defaults (see the parity report).
AGREE_QWEN3 = ["cjk.txt", "code.txt", "mixed_scripts.txt", "numbers.txt", "prose.txt", "whitespace.txt"]


@pytest.mark.parametrize("name", AGREE_QWEN3)
def test_qwen3_identical_ids_across_three_engines(test_cache, name):
    toks = trio(test_cache, "qwen3")
    text = read_text(CORPUS / name)
    report = check_parity(text, toks)
    assert report.outcome == "identical", report.to_text()
    assert report.tokens_checked == len(report.engines[0].ids) > 10
    assert report.engines[0].ids == report.engines[1].ids == report.engines[2].ids
    assert [e.engine for e in report.engines] == ["transformers", "llama.cpp", "mlx"]
    assert all(e.bos_id is None and e.leading_bos == 0 for e in report.engines)  # Qwen3 has no BOS


def test_llama3_identical_once_bos_is_aligned_on_whole_corpus(test_cache):
    toks = trio(test_cache, "llama3")
    for path in sorted(CORPUS.glob("*.txt")):
        report = check_parity(read_text(path), toks, add_bos="yes", special="text")
        assert report.outcome == "identical", f"{path.name}: {report.to_text()}"
        assert all(e.leading_bos == 1 and e.bos_handling == "prepended by kldcard" for e in report.engines)


def test_gemma3_identical_under_engine_defaults(test_cache):
    toks = trio(test_cache, "gemma3")
    for name in ["code.txt", "cjk.txt", "emoji.txt", "whitespace.txt"]:
        report = check_parity(read_text(CORPUS / name), toks)
        assert report.outcome == "identical", f"{name}: {report.to_text()}"
        assert all(e.default_adds_bos and e.leading_bos == 1 and e.ids[0] == 2 for e in report.engines)


def test_llama3_default_bos_disagreement_is_named_missing_bos(test_cache):
    """This Llama 3 tokenizer.json has no BOS template: transformers adds none, llama.cpp adds one."""
    hf, gguf, _ = trio(test_cache, "llama3")
    report = check_parity("Hello world", [hf, gguf])
    m = report.first_mismatch
    assert report.outcome == "mismatch"
    assert (m.kind, m.position) == ("missing BOS", 0)
    assert m.ids_b[0] == 128000 and m.ids_a[0] != 128000
    assert m.pieces_b[0] == "<|begin_of_text|>"
    assert hf.label in m.detail and "does not start with BOS" in m.detail
    assert any("disagree on adding BOS" in w for w in report.warnings)


def test_dropped_bos_is_detected_and_named(test_cache):
    """A GGUF whose add_bos_token was switched off against the same vocabulary with it on."""
    with_bos = tokenizer(f"llama.cpp:{vocab_gguf(test_cache, 'gemma3')}")
    dropped = tokenizer(f"llama.cpp:{vocab_gguf(test_cache, 'gemma3', 'nobos', add_bos=False)}")
    report = check_parity(read_text(CORPUS / "prose.txt"), [with_bos, dropped])
    m = report.first_mismatch
    assert (m.kind, m.position) == ("missing BOS", 0)
    assert report.engines[0].default_adds_bos and not report.engines[1].default_adds_bos
    assert m.ids_a[:2] == [2, m.ids_b[0]]  # the rest is the same text, shifted by one


def test_doubled_bos_is_detected_and_named(test_cache):
    """A text that already starts with BOS, given to an engine that adds BOS again."""
    hf, gguf, _ = trio(test_cache, "llama3")
    text = "<|begin_of_text|>The reference checkpoint."
    report = check_parity(text, [hf, gguf], special="parse")
    m = report.first_mismatch
    assert (m.kind, m.position) == ("double BOS", 1)
    assert report.engines[1].leading_bos == 2 and report.engines[0].leading_bos == 1
    assert gguf.label in m.detail
    assert any("double BOS" in w and gguf.label in w for w in report.warnings)


def test_mlx_skips_bos_when_text_starts_with_it_but_transformers_does_not(test_cache):
    """mlx-lm's generate() adds special tokens only if the prompt does not start with BOS."""
    hf, _, mlx = trio(test_cache, "gemma3")
    report = check_parity("<bos>Hello", [hf, mlx], special="parse")
    assert report.first_mismatch.kind == "double BOS"
    assert [e.leading_bos for e in report.engines] == [2, 1]


def test_appended_eos_is_detected_and_named(test_cache):
    hf, gguf, _ = trio(test_cache, "qwen3")
    with_eos = tokenizer(f"llama.cpp:{vocab_gguf(test_cache, 'qwen3', 'eos', add_eos=True)}")
    report = check_parity("Hello world", [hf, with_eos])
    m = report.first_mismatch
    assert (m.kind, m.position) == ("EOS", 2) and "151645" in m.detail
    assert report.engines[1].ids == [*report.engines[0].ids, 151645]


def test_special_token_lookalikes_are_parsed_differently_by_default(test_cache):
    hf, gguf, mlx = trio(test_cache, "qwen3")
    text = read_text(CORPUS / "special_lookalikes.txt")
    report = check_parity(text, [hf, gguf, mlx])
    m = report.first_mismatch
    assert m.kind == "special-token parsing" and m.b == gguf.label
    assert "<|im_start|>" in m.context_after
    assert 151644 in m.ids_a and 151644 not in m.ids_b
    # Kept as text everywhere, the three engines agree.
    assert check_parity(text, [hf, gguf, mlx], special="text").outcome == "identical"


def test_nfc_normalizer_difference_is_named(test_cache):
    """Qwen3's tokenizer.json normalizes to NFC; llama.cpp does not (a decomposed é differs)."""
    hf, gguf, _ = trio(test_cache, "qwen3")
    report = check_parity("caf" + "e\u0301" + " au lait", [hf, gguf])
    m = report.first_mismatch
    assert m.kind == "pre-tokenizer" and "NFC" in m.detail


def test_chat_templates_agree_when_built_from_the_same_files(test_cache):
    for family in ("qwen3", "llama3"):
        report = check_chat_parity(read_conversation(CONVERSATION), trio(test_cache, family))
        assert report.outcome == "identical", report.to_text()
        assert not report.chat_diffs
        assert len({e.rendered for e in report.engines}) == 1


def test_chat_template_rendered_differently_is_detected(test_cache):
    hf = tokenizer(f"hf:{fetch_tokenizer('qwen3', test_cache)}")
    other = tokenizer(f"llama.cpp:{vocab_gguf(test_cache, 'qwen3', 'chatml', chat_template=CHATML_BLANK_LINE)}")
    report = check_chat_parity(read_conversation(CONVERSATION), [hf, other])
    assert report.outcome == "mismatch"
    (d,) = report.chat_diffs
    assert d.b == other.label and "\n\n" in d.excerpt_b and "\n\n" not in d.excerpt_a
    m = report.first_mismatch
    assert m.kind == "chat template" and f"character {d.char}" in m.detail


def test_bos_on_a_chat_prompt_that_has_one_is_the_double_bos_trap(test_cache):
    toks = trio(test_cache, "llama3")
    right = check_chat_parity(read_conversation(CONVERSATION), toks)
    assert all(e.leading_bos == 1 for e in right.engines) and not right.warnings
    trap = check_chat_parity(read_conversation(CONVERSATION), toks, add_bos="yes")
    assert all(e.leading_bos == 2 for e in trap.engines)
    assert sum("double BOS" in w for w in trap.warnings) == 3


def test_disclosure_matches_the_schema(test_cache):
    report = check_parity(read_text(CORPUS / "prose.txt"), trio(test_cache, "qwen3"))
    d = report.to_disclosure()
    parsed = TokenizerParity.model_validate(d)
    assert parsed.outcome == "identical" and parsed.tokens_checked == report.tokens_checked
    assert d["engines"][0].startswith("transformers ") and d["engines"][1].startswith("llama-cpp-python ")
    assert TokenizerParity.model_validate(report.overridden().to_disclosure()).outcome == "overridden"


def test_parity_for_capture_refuses_on_mismatch_and_records_override(test_cache):
    hf, gguf, _ = trio(test_cache, "llama3")
    text = read_text(CORPUS / "prose.txt")
    with pytest.raises(TokenMismatch) as exc:
        parity_for_capture(gguf, [hf], text)
    assert exc.value.position == 0 and "missing BOS" in str(exc.value)
    d = parity_for_capture(gguf, [hf], text, override=True)
    assert d["outcome"] == "overridden" and d["tokens_checked"] > 0
    ok = parity_for_capture(gguf, [hf], text, add_bos="yes")
    assert ok["outcome"] == "identical"
    TokenizerParity.model_validate(ok)


def test_parity_for_capture_checks_the_ids_the_capture_feeds(test_cache):
    hf, gguf, _ = trio(test_cache, "qwen3")
    text = read_text(CORPUS / "prose.txt")
    ids, _ = hf.tokenize(text, add_bos=None, special=True)
    assert parity_for_capture(hf, [gguf], text, ids=ids)["outcome"] == "identical"
    with pytest.raises(TokenMismatch):
        parity_for_capture(hf, [gguf], text, ids=[151643, *ids])  # a stray leading token


def test_text_longer_than_context_is_refused(test_cache):
    with pytest.raises(InputError, match="longer than the context n_ctx=8"):
        check_parity(read_text(CORPUS / "prose.txt"), trio(test_cache, "qwen3")[:2], n_ctx=8)
