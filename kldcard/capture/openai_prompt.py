"""The three prompt log-probability requests (llama-cpp-python, vLLM, SGLang) and their answers.

Each returns a :class:`~kldcard.capture.openai_engine.PromptTopK` whose position ``i`` is the
distribution after prompt tokens ``0..i`` (it predicts token ``i+1``), log-probabilities in nats.
The vLLM and SGLang variants are written from their documented shapes and are untested here.
"""

from __future__ import annotations

import numpy as np

from kldcard.capture.openai_align import align_echo, entry_ids_of
from kldcard.capture.openai_engine import SGLANG_SAMPLING, OpenAIServer, PromptTopK, error_text
from kldcard.errors import InputError

# What a server says when it validates "prompt" as a string and got a list of ids.
_REJECTS_IDS = ("valid string", "string_type", "validation", "must be a string", "str type expected")


def prompt_topk(srv: OpenAIServer, model: str, text: str, token_ids: list[int], k: int) -> PromptTopK:
    """Top-``k`` log-probabilities at every prompt position ``srv`` reports (one request: the caller
    sends long texts in pieces). ``k = -1``: the full vocabulary where the server allows it (vLLM
    ``prompt_logprobs: -1``)."""
    if srv.api == "vllm":
        return vllm_topk(srv, model, token_ids, k)
    if srv.api == "sglang":
        return sglang_topk(srv, model, token_ids, k)
    return llamacpp_topk(srv, model, text, token_ids, k)


def _best(pairs: dict[int, float], k: int) -> tuple[list[int], list[float]]:
    best = sorted(pairs.items(), key=lambda kv: -kv[1])
    if k > 0:
        best = best[:k]
    return [t for t, _ in best], [v for _, v in best]


# -- llama-cpp-python ---------------------------------------------------------------------------


def _llamacpp_request(srv: OpenAIServer, model: str, text: str, token_ids: list[int], k: int) -> dict:
    """Send the prompt as token ids while the server takes them, else as text (remembered)."""
    body = {"model": model, "max_tokens": 1, "echo": True, "logprobs": k, "temperature": 0.0}
    if srv.ids_accepted is not False:
        status, payload = srv.completions({**body, "prompt": list(token_ids)})
        msg = error_text(payload).lower() if status != 200 else ""
        if status == 200:
            srv.ids_accepted = True
            return srv.completion_payload(status, payload)
        if status in (400, 422, 500) and any(m in msg for m in _REJECTS_IDS):
            srv.ids_accepted = False  # llama-cpp-python 0.3.x: prompt must be a string
        else:
            return srv.completion_payload(status, payload)
    status, payload = srv.completions({**body, "prompt": text})
    return srv.completion_payload(status, payload)


def llamacpp_topk(srv: OpenAIServer, model: str, text: str, token_ids: list[int], k: int) -> PromptTopK:
    if k < 1:
        raise InputError("llama-cpp-python returns top-k dicts only: --top-k must be >= 1")
    payload = _llamacpp_request(srv, model, text, token_ids, k)
    lp = payload["choices"][0].get("logprobs")
    top = lp.get("top_logprobs") if isinstance(lp, dict) else None
    if not isinstance(top, list) or not any(isinstance(t, dict) for t in top):
        raise InputError(f"{srv.base_url} does not return prompt log-probabilities (no logprobs.top_logprobs "
                         "in an echo completion; a llama-cpp-python server needs --logits_all true)")
    n_prompt = (payload.get("usage") or {}).get("prompt_tokens")
    strings = lp.get("tokens")
    if n_prompt != len(token_ids) or not isinstance(strings, list) or len(strings) != len(top):
        raise InputError(f"{srv.base_url}: the completion covered {n_prompt} prompt tokens, but the server's "
                         f"tokenizer gave {len(token_ids)} tokens")
    entry_ids = entry_ids_of(strings, lambda s: srv.string_id(model, s))
    where = align_echo(token_ids, entry_ids, bos=srv.bos_id, where=srv.base_url)
    positions, ids, lps, unresolved = [], [], [], 0
    for e, entry in enumerate(top):
        if not isinstance(entry, dict):
            continue  # entry 0 is null by the OpenAI convention
        pairs: dict[int, float] = {}
        for s, v in entry.items():
            tid = srv.string_id(model, s)
            if tid is None:
                unresolved += 1
                continue
            pairs[tid] = float(v)
        i, v = _best(pairs, k)
        positions.append(where[e])
        ids.append(i)
        lps.append(v)
    sent = "token ids" if srv.ids_accepted else "text (the server does not take token ids)"
    notes = [f"llama-cpp-python echo+logprobs, prompt sent as {sent}: the first position of each request is never "
             f"reported; token strings mapped to ids ({unresolved} entries could not be mapped and count as tail)"]
    return PromptTopK(np.asarray(positions, np.int64), ids, lps, unresolved, notes)


# -- vLLM ---------------------------------------------------------------------------------------


def vllm_topk(srv: OpenAIServer, model: str, token_ids: list[int], k: int) -> PromptTopK:
    """``prompt_logprobs: k`` (``-1``: every id, vLLM ≥ 0.8 with ``--max-logprobs -1``). Entry ``j``
    is the distribution predicting token ``j`` (our position ``j − 1``); entry 0 is null."""
    body = {"model": model, "prompt": list(token_ids), "max_tokens": 1, "prompt_logprobs": k, "temperature": 0.0}
    status, payload = srv.completions(body)
    plp = srv.completion_payload(status, payload)["choices"][0].get("prompt_logprobs")
    if not isinstance(plp, list) or not any(isinstance(t, dict) for t in plp):
        raise InputError(f"{srv.base_url} does not return prompt log-probabilities (no choices[0].prompt_logprobs)")
    if len(plp) != len(token_ids):
        raise InputError(f"{srv.base_url}: {len(plp)} prompt_logprobs entries for {len(token_ids)} prompt tokens")
    positions, ids, lps = [], [], []
    for j, entry in enumerate(plp):
        if not isinstance(entry, dict):
            continue
        pairs = {}
        for key, v in entry.items():
            val = v.get("logprob") if isinstance(v, dict) else v
            try:
                pairs[int(key)] = float(val)
            except (TypeError, ValueError):
                raise InputError(f"{srv.base_url}: malformed prompt_logprobs entry {key!r}: {v!r}") from None
        i, v = _best(pairs, k)
        positions.append(j - 1)
        ids.append(i)
        lps.append(v)
    what = "the full vocabulary (prompt_logprobs -1)" if k < 0 else f"top {k}"
    return PromptTopK(np.asarray(positions, np.int64), ids, lps, 0,
                      [f"vLLM prompt_logprobs, {what} (ids reported directly; untested variant)"])


# -- SGLang -------------------------------------------------------------------------------------


def sglang_topk(srv: OpenAIServer, model: str, token_ids: list[int], k: int) -> PromptTopK:
    """``input_top_logprobs[j]``: [[logprob, id, text], …] predicting token ``j`` (position ``j − 1``)."""
    if k < 1:
        raise InputError("SGLang returns top_logprobs_num entries: --top-k must be >= 1")
    meta = srv.sglang_generate({"input_ids": list(token_ids), "sampling_params": SGLANG_SAMPLING,
                                  "return_logprob": True, "logprob_start_len": 0, "top_logprobs_num": k})
    top = meta.get("input_top_logprobs")
    if not isinstance(top, list) or len(top) != len(token_ids):
        raise InputError(f"{srv.base_url}/generate: input_top_logprobs has no entry per prompt token")
    positions, ids, lps = [], [], []
    for j, entry in enumerate(top):
        if not entry:
            continue
        try:
            pairs = {int(t[1]): float(t[0]) for t in entry}
        except (TypeError, ValueError, IndexError):
            raise InputError(f"{srv.base_url}/generate: malformed input_top_logprobs entry {j}") from None
        i, v = _best(pairs, k)
        positions.append(j - 1)
        ids.append(i)
        lps.append(v)
    return PromptTopK(np.asarray(positions, np.int64), ids, lps, 0,
                      ["SGLang /generate input_top_logprobs (ids reported directly; untested variant)"])
