"""``kldcard tokens``: exit codes (0 identical, 1 mismatch, 2 unusable input), reports, bad input."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers_tokens import CHATML_BLANK_LINE, CONVERSATION, CORPUS, vocab_gguf

from kldcard.cli.main import main
from kldcard.demo.tiny_models import fetch_tokenizer

pytestmark = pytest.mark.engines


@pytest.fixture(scope="module")
def qwen3(test_cache):
    tok = fetch_tokenizer("qwen3", test_cache)
    return {"hf": f"hf:{tok}", "gguf": f"llama.cpp:{vocab_gguf(test_cache, 'qwen3')}", "mlx": f"mlx:{tok}", "dir": tok}


@pytest.fixture(scope="module")
def llama3(test_cache):
    tok = fetch_tokenizer("llama3", test_cache)
    return {"hf": f"hf:{tok}", "gguf": f"llama.cpp:{vocab_gguf(test_cache, 'llama3')}"}


def _run(capsys, *argv):
    rc = main(["tokens", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_identical_exits_0_and_reports_bos_handling(capsys, qwen3):
    rc, out, err = _run(capsys, "--text", str(CORPUS / "code.txt"), qwen3["hf"], qwen3["gguf"], qwen3["mlx"])
    assert rc == 0, err
    assert "IDENTICAL" in out and "adds BOS by default: no" in out and "used: engine default" in out
    assert out.count("transformers ") == 1 and "llama-cpp-python " in out and "mlx-lm " in out


def test_mismatch_exits_1_with_position_pieces_and_kind(capsys, llama3):
    rc, out, _ = _run(capsys, "--text", str(CORPUS / "prose.txt"), llama3["hf"], llama3["gguf"])
    assert rc == 1
    assert "MISMATCH" in out and "at token 0: missing BOS" in out and "'<|begin_of_text|>'" in out
    rc, out, _ = _run(capsys, "--text", str(CORPUS / "prose.txt"), llama3["hf"], llama3["gguf"], "--add-bos", "yes")
    assert rc == 0 and "prepended by kldcard" in out


def test_json_output_has_stable_keys_and_ids(capsys, llama3):
    rc, out, _ = _run(
        capsys, "--text", str(CORPUS / "prose.txt"), llama3["hf"], llama3["gguf"], "-o", "json", "--ids"
    )
    data = json.loads(out)
    assert rc == 1
    assert set(data) >= {"engines", "tokens_checked", "outcome", "first_mismatch", "disclosure", "warnings"}
    assert data["first_mismatch"]["kind"] == "missing BOS"
    assert data["engines"][1]["ids"][0] == 128000 and data["engines"][0]["ids"][0] != 128000
    disclosure = data["disclosure"]
    assert set(disclosure) == {"engines", "tokens_checked", "outcome"}  # schema.TokenizerParity
    assert (disclosure["tokens_checked"], disclosure["outcome"]) == (data["tokens_checked"], "mismatch")
    assert disclosure["engines"][0] == f"{data['engines'][0]['engine_label']}: llama3"
    assert disclosure["engines"][1].endswith(".gguf")


def test_chat_option_compares_rendered_prompts(capsys, qwen3, test_cache):
    rc, out, _ = _run(capsys, "--chat", str(CONVERSATION), qwen3["hf"], qwen3["gguf"])
    assert rc == 0 and "chat prompt" in out
    other = vocab_gguf(test_cache, "qwen3", "chatml", chat_template=CHATML_BLANK_LINE)
    rc, out, _ = _run(capsys, "--chat", str(CONVERSATION), qwen3["hf"], f"llama.cpp:{other}")
    assert rc == 1 and "rendered chat prompts differ at character" in out and "chat template" in out


# ---------------------------------------------------------------------------------------------
# Bad input: one line, exit 2
# ---------------------------------------------------------------------------------------------


def _bad(capsys, *argv) -> str:
    rc, out, err = _run(capsys, *argv)
    assert rc == 2, out + err
    assert err.startswith("kldcard: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_empty_text(capsys, tmp_path, qwen3):
    (tmp_path / "empty.txt").write_bytes(b"")
    assert "the text is empty" in _bad(capsys, "--text", str(tmp_path / "empty.txt"), qwen3["hf"], qwen3["gguf"])


def test_invalid_utf8(capsys, tmp_path, qwen3):
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 cr\u00e8me".encode("latin-1"))
    err = _bad(capsys, "--text", str(tmp_path / "latin1.txt"), qwen3["hf"], qwen3["gguf"])
    assert "not valid UTF-8 (byte 3" in err


def test_text_longer_than_context(capsys, qwen3):
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], qwen3["gguf"], "--n-ctx", "16")
    assert "longer than the context n_ctx=16" in err


def test_gguf_without_vocabulary(capsys, test_cache, qwen3):
    novocab = vocab_gguf(test_cache, "qwen3", "novocab", with_vocab=False)
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], f"llama.cpp:{novocab}")
    assert "has no vocabulary" in err


def test_gguf_whose_vocab_size_disagrees(capsys, test_cache, qwen3):
    bad = vocab_gguf(test_cache, "qwen3", "vocab1000", declared_vocab_size=1000)
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], f"llama.cpp:{bad}")
    assert "qwen3.vocab_size is 1000 but the vocabulary has 151936 tokens" in err


def test_tokenizer_files_that_disagree_with_the_models_vocab_size(capsys, tmp_path, qwen3):
    model = tmp_path / "model"
    shutil.copytree(qwen3["dir"], model)
    (model / "config.json").write_text(json.dumps({"model_type": "qwen3", "vocab_size": 32000}))
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), f"hf:{model}", qwen3["gguf"])
    assert "tokenizer has 151669 tokens but config.json vocab_size is 32000" in err


def test_ids_beyond_the_other_engines_vocabulary(capsys, test_cache, qwen3):
    """Qwen3 ids reach 151k; a Llama 3 tokenizer has 128,256 rows: not comparable at all."""
    llama = fetch_tokenizer("llama3", test_cache)
    err = _bad(capsys, "--text", str(CORPUS / "cjk.txt"), qwen3["hf"], f"hf:{llama}")
    assert "has only 128256 tokens" in err and "disagree with the model's vocabulary" in err


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nonsense", "is not ENGINE:PATH"),
        ("vllm:/tmp", "unknown engine 'vllm'"),
        ("llama.cpp:/does/not/exist.gguf", "no such GGUF file"),
        ("hf:/does/not/exist", "no such directory"),
    ],
)
def test_bad_engine_spec(capsys, qwen3, spec, message):
    assert message in _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], spec)


def test_bos_asked_of_a_tokenizer_without_one(capsys, qwen3):
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], qwen3["gguf"], "--add-bos", "yes")
    assert "has no BOS token" in err


def test_one_engine_is_not_enough(capsys, qwen3):
    assert "at least two engine specs" in _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"])


def test_bad_conversation(capsys, tmp_path, qwen3):
    (tmp_path / "c.json").write_text('{"role": "user"}')
    assert "non-empty JSON list" in _bad(capsys, "--chat", str(tmp_path / "c.json"), qwen3["hf"], qwen3["gguf"])
    (tmp_path / "d.json").write_text("[{")
    assert "not valid JSON" in _bad(capsys, "--chat", str(tmp_path / "d.json"), qwen3["hf"], qwen3["gguf"])


def test_not_a_gguf(capsys, tmp_path, qwen3):
    (tmp_path / "x.gguf").write_bytes(b"not a gguf at all")
    err = _bad(capsys, "--text", str(CORPUS / "prose.txt"), qwen3["hf"], f"llama.cpp:{tmp_path / 'x.gguf'}")
    assert "not a readable GGUF" in err


def test_every_option_is_documented():
    """docs/tokens.md names every option of ``kldcard tokens``."""
    import argparse

    from kldcard.cli import tokens as cli_tokens

    parser = cli_tokens.add_parser(argparse.ArgumentParser().add_subparsers())
    doc = (CORPUS.parents[3] / "docs" / "tokens.md").read_text(encoding="utf-8")
    options = [s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"]
    assert options and all(f"`{o}" in doc for o in options), [o for o in options if f"`{o}" not in doc]
