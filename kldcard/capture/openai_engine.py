"""Prompt log-probabilities from an OpenAI-compatible server (top-k only), with stdlib ``urllib``.

Two request variants exist in the wild:

- **llama-cpp-python** (``python -m llama_cpp.server``): ``/v1/completions`` with ``echo: true,
  logprobs: K, max_tokens: 1``; the prompt is sent as text. ``choices[0].logprobs.top_logprobs[i]``
  is a ``{token string: logprob}`` dict of the distribution after prompt tokens ``0..i`` (our
  position ``i``), entry 0 is always null, and the dict may hold one extra entry (the prompt token's
  own string). The server's tokenizer is ``/extras/tokenize``. The model must be loaded with
  ``logits_all`` (its default), otherwise the server answers with an error.
  Token *strings* are mapped back to ids through ``/extras/tokenize`` (one call per distinct
  string, cached): a string that is empty or does not tokenize to exactly one id cannot be mapped;
  its mass stays in the tail and is counted as unresolved.
- **vLLM** (and servers copying it): ``/v1/completions`` with ``prompt`` = the token ids and
  ``prompt_logprobs: K``; ``choices[0].prompt_logprobs[j]`` is ``{id: {"logprob": ..}}`` for the
  distribution predicting token ``j`` (our position ``j-1``); tokenizer ``/tokenize``, version
  ``/version``. Implemented from vLLM's documented response shape; only the llama-cpp-python
  variant is exercised by the test suite.

Every failure is an :class:`~kldcard.errors.InputError` with one line (exit 2): server unreachable,
no completions endpoint, no prompt log-probabilities, unknown model name, malformed answers.
Connection failures, timeouts and 502/503/504 are retried with exponential back-off.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kldcard.engines import not_installed
from kldcard.errors import InputError

__all__ = ["APIS", "OpenAIServer", "PromptTopK"]

APIS = ("auto", "llama-cpp-python", "vllm")
_RETRY_STATUS = (502, 503, 504)


@dataclass
class PromptTopK:
    """Top-k log-probabilities (nats) of the prompt positions the server reported."""

    positions: np.ndarray  # int64 [n], position i = after tokens 0..i
    ids: list[list[int]]  # per position, descending log-probability
    logprobs: list[list[float]]
    n_unresolved: int = 0  # reported entries whose id could not be determined
    notes: list[str] = field(default_factory=list)


def _one_line(text: str, limit: int = 200) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


class OpenAIServer:
    """A client of one OpenAI-compatible server. ``base_url`` without the ``/v1`` suffix (it is
    stripped when given). ``timeout`` seconds per request; ``retries`` extra attempts on
    connection errors/timeouts/502-504, sleeping ``backoff * 2**attempt`` seconds in between."""

    def __init__(self, base_url: str, *, api: str = "auto", timeout: float = 120.0, retries: int = 3,
                 backoff: float = 0.5, api_key: str | None = None):
        url = base_url.rstrip("/")
        if url.endswith("/v1"):
            url = url[:-3]
        if not url.startswith(("http://", "https://")):
            raise InputError(f"--base-url must start with http:// or https://, not {base_url!r}")
        if api not in APIS:
            raise InputError(f"unknown server API {api!r}; use one of {', '.join(APIS)}")
        self.base_url, self.timeout, self.retries, self.backoff = url, timeout, retries, backoff
        self.api_key = api_key
        self._api = None if api == "auto" else api
        self._version: str | None = None
        self._tok_cache: dict[str, int | None] = {}
        self._tok_prefix: list[int] | None = None
        # decoded string -> ids, from the model's own vocabulary (see load_gguf_vocab): makes the
        # string -> id mapping exact, and strings shared by several ids are left unresolved.
        self.local_vocab: dict[str, list[int]] | None = None

    def load_gguf_vocab(self, gguf_path: str) -> int:
        """Map token strings to ids with the GGUF's vocabulary, decoded exactly as llama-cpp-python
        decodes them for ``top_logprobs`` (UTF-8, invalid bytes dropped). Returns the vocab size."""
        try:
            import llama_cpp
        except ImportError:
            raise not_installed("llama.cpp") from None
        from kldcard.capture.engines.llamacpp_engine import quiet_logs

        quiet_logs()
        try:
            llm = llama_cpp.Llama(str(gguf_path), vocab_only=True, verbose=False)
        except (ValueError, OSError) as exc:
            raise InputError(f"{gguf_path}: cannot read the GGUF vocabulary ({_one_line(str(exc))})") from None
        table: dict[str, list[int]] = {}
        n = llm.n_vocab()
        for i in range(n):
            table.setdefault(llm.detokenize([i]).decode("utf-8", errors="ignore"), []).append(i)
        llm.close()
        self.local_vocab, self._tok_cache = table, {}
        return n

    # -- transport ---------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(HTTP status, decoded JSON or text). Raises InputError when the server cannot be reached."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return resp.status, _decode(resp.read())
            except urllib.error.HTTPError as exc:
                payload = _decode(exc.read())
                if exc.code in _RETRY_STATUS:
                    last = f"HTTP {exc.code}"
                    continue
                return exc.code, payload
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ConnectionRefusedError):
                    last = "connection refused (is the server running?)"
                elif isinstance(reason, (socket.timeout, TimeoutError)):
                    last = f"no answer within {self.timeout:g} s"
                else:
                    last = _one_line(str(reason))
        raise InputError(f"cannot reach the server at {self.base_url}: {last} ({self.retries + 1} attempts)")

    def _post_ok(self, path: str, body: Any, what: str) -> Any:
        status, payload = self.request("POST", path, body)
        if status == 404:
            raise InputError(f"{self.base_url}{path} not found (HTTP 404): the server has no {what} endpoint")
        if status != 200:
            raise InputError(f"{self.base_url}{path}: HTTP {status}: {_error_text(payload)}")
        if not isinstance(payload, dict):
            raise InputError(f"{self.base_url}{path}: answer is not a JSON object")
        return payload

    # -- server facts ------------------------------------------------------------------------

    @property
    def api(self) -> str:
        """``llama-cpp-python`` or ``vllm`` (detected once when ``api="auto"``)."""
        if self._api is None:
            status, payload = self.request("GET", "/version")
            if status == 200 and isinstance(payload, dict) and "version" in payload:
                self._api, self._version = "vllm", str(payload["version"])
            else:
                status, payload = self.request("GET", "/openapi.json")
                info = payload.get("info", {}) if isinstance(payload, dict) else {}
                if status == 200 and "llama.cpp python" in str(info.get("title", "")).lower():
                    self._api, self._version = "llama-cpp-python", str(info.get("version"))
                else:
                    raise InputError(
                        f"{self.base_url} is not a server whose prompt log-probabilities kldcard knows how to "
                        "request (neither vLLM's /version nor llama-cpp-python's /openapi.json answered); "
                        "pass --api llama-cpp-python or --api vllm"
                    )
        return self._api

    @property
    def version(self) -> str:
        if self._version is None:
            _ = self.api
            if self._version is None:
                path = "/version" if self.api == "vllm" else "/openapi.json"
                status, payload = self.request("GET", path)
                obj = payload if self.api == "vllm" else (payload or {}).get("info", {}) if isinstance(payload, dict) else {}
                self._version = str(obj.get("version", "unknown")) if status == 200 and isinstance(obj, dict) else "unknown"
        return self._version

    def models(self) -> list[str]:
        status, payload = self.request("GET", "/v1/models")
        if status == 404:
            raise InputError(f"{self.base_url}/v1/models not found (HTTP 404): not an OpenAI-compatible server")
        if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise InputError(f"{self.base_url}/v1/models: HTTP {status}: {_error_text(payload)}")
        return [str(m.get("id")) for m in payload["data"] if isinstance(m, dict)]

    def check_model(self, model: str) -> None:
        """Refuse a model name the server does not list: llama-cpp-python would silently answer
        with its default model instead, which would put the wrong model's numbers on a card."""
        served = self.models()
        if model not in served:
            raise InputError(f"model {model!r} is not served by {self.base_url} (it serves: {', '.join(served) or 'none'})")

    # -- tokenization ------------------------------------------------------------------------

    def tokenize(self, model: str, text: str) -> list[int]:
        """The server's own token ids for ``text`` (BOS included when the model adds one)."""
        if self.api == "vllm":
            p = self._post_ok("/tokenize", {"model": model, "prompt": text, "add_special_tokens": True}, "tokenize")
        else:
            p = self._post_ok("/extras/tokenize", {"model": model, "input": text}, "tokenize")
        toks = p.get("tokens")
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            raise InputError(f"{self.base_url}: tokenize answer has no integer 'tokens' list")
        return toks

    def _string_id(self, model: str, s: str) -> int | None:
        """The single id whose text is ``s`` (via the server's tokenizer), or None if ambiguous."""
        if s in self._tok_cache:
            return self._tok_cache[s]
        if self.local_vocab is not None:
            cands = self.local_vocab.get(s, ())
            self._tok_cache[s] = cands[0] if len(cands) == 1 else None
            return self._tok_cache[s]
        if self._tok_prefix is None:
            self._tok_prefix = self.tokenize(model, "")  # [BOS] for models that add one, else []
        out = None
        if s:
            ids = self.tokenize(model, s)
            if ids[: len(self._tok_prefix)] == self._tok_prefix:
                ids = ids[len(self._tok_prefix):]
            out = ids[0] if len(ids) == 1 else None
        self._tok_cache[s] = out
        return out

    # -- prompt log-probabilities ------------------------------------------------------------

    def prompt_topk(self, model: str, text: str, token_ids: list[int], k: int) -> PromptTopK:
        """Top-``k`` log-probabilities at every prompt position the server reports."""
        if self.api == "vllm":
            return self._vllm_topk(model, token_ids, k)
        return self._llamacpp_topk(model, text, token_ids, k)

    def _completions(self, body: dict) -> dict:
        status, payload = self.request("POST", "/v1/completions", body)
        if status == 404:
            raise InputError(f"{self.base_url}/v1/completions not found (HTTP 404): not an OpenAI-compatible completions server")
        if status != 200:
            msg = _error_text(payload)
            if "logprob" in msg.lower() or "logits_all" in msg.lower():
                raise InputError(f"{self.base_url} does not return prompt log-probabilities: {msg}")
            raise InputError(f"{self.base_url}/v1/completions: HTTP {status}: {msg}")
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise InputError(f"{self.base_url}/v1/completions: answer has no choices")
        return payload

    def _llamacpp_topk(self, model: str, text: str, token_ids: list[int], k: int) -> PromptTopK:
        body = {"model": model, "prompt": text, "max_tokens": 1, "echo": True, "logprobs": k, "temperature": 0.0}
        payload = self._completions(body)
        lp = payload["choices"][0].get("logprobs")
        top = lp.get("top_logprobs") if isinstance(lp, dict) else None
        if not isinstance(top, list) or not any(isinstance(t, dict) for t in top):
            raise InputError(f"{self.base_url} does not return prompt log-probabilities (no logprobs.top_logprobs "
                             "in an echo completion; a llama-cpp-python server needs --logits_all true)")
        n_prompt = (payload.get("usage") or {}).get("prompt_tokens")
        strings = lp.get("tokens")
        if n_prompt != len(token_ids) or not isinstance(strings, list) or len(strings) != len(top):
            raise InputError(f"{self.base_url}: the completion covered {n_prompt} prompt tokens, but the server's "
                             f"tokenizer gave {len(token_ids)} tokens")
        where = self._align_llamacpp(model, token_ids, strings)
        positions, ids, lps, unresolved = [], [], [], 0
        for e, entry in enumerate(top):
            i = where[e]
            if not isinstance(entry, dict) or i >= len(token_ids):
                continue  # entry 0 is null by the OpenAI convention; past the prompt: the completion
            pairs: dict[int, float] = {}
            for s, v in entry.items():
                tid = self._string_id(model, s)
                if tid is None:
                    unresolved += 1
                    continue
                pairs[tid] = float(v)
            best = sorted(pairs.items(), key=lambda kv: -kv[1])[:k]
            positions.append(i)
            ids.append([t for t, _ in best])
            lps.append([v for _, v in best])
        order = np.argsort(positions, kind="stable")
        ids, lps = [ids[j] for j in order], [lps[j] for j in order]
        positions = [positions[j] for j in order]
        notes = [f"llama-cpp-python echo+logprobs: position 0 is never reported; token strings mapped to ids "
                 f"through /extras/tokenize ({unresolved} entries could not be mapped and count as tail)"]
        return PromptTopK(np.asarray(positions, np.int64), ids, lps, unresolved, notes)

    def _align_llamacpp(self, model: str, token_ids: list[int], strings: list[str]) -> list[int]:
        """Position of each echoed entry. llama-cpp-python drops the leading BOS and every entry
        whose token equals its BOS id (entry e then no longer is position e) and pairs the entry
        of token ``t[j]`` with the distribution after ``t[0..j]``: align the echoed token strings
        with the ids to recover which positions were dropped."""
        for start in (0, 1):
            seq = list(token_ids[start:]) + [-1]  # -1: the generated token (any string)
            where, dropped, e = [], set(), 0
            for j, tid in enumerate(seq):
                if e == len(strings):
                    break
                got = self._string_id(model, strings[e])
                if tid == -1 or got is None or got == tid:
                    where.append(j)
                    e += 1
                else:
                    dropped.add(tid)
            first_ok = start == 0 or (len(dropped) <= 1 and token_ids[0] in (dropped or {token_ids[0]}))
            if e == len(strings) and len(dropped) <= 1 and first_ok:
                return where
        raise InputError(f"{self.base_url}: cannot align the {len(strings)} echoed prompt tokens with the "
                         f"{len(token_ids)} token ids of the server's tokenizer")

    def _vllm_topk(self, model: str, token_ids: list[int], k: int) -> PromptTopK:
        body = {"model": model, "prompt": list(token_ids), "max_tokens": 1, "prompt_logprobs": k, "temperature": 0.0}
        payload = self._completions(body)
        plp = payload["choices"][0].get("prompt_logprobs")
        if not isinstance(plp, list) or not any(isinstance(t, dict) for t in plp):
            raise InputError(f"{self.base_url} does not return prompt log-probabilities (no choices[0].prompt_logprobs)")
        if len(plp) != len(token_ids):
            raise InputError(f"{self.base_url}: {len(plp)} prompt_logprobs entries for {len(token_ids)} prompt tokens")
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
                    raise InputError(f"{self.base_url}: malformed prompt_logprobs entry {key!r}: {v!r}") from None
            best = sorted(pairs.items(), key=lambda kv: -kv[1])[:k]
            positions.append(j - 1)  # entry j predicts token j: the distribution after 0..j-1
            ids.append([t for t, _ in best])
            lps.append([v for _, v in best])
        return PromptTopK(np.asarray(positions, np.int64), ids, lps, 0, ["vLLM prompt_logprobs (ids reported directly)"])


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")


def _error_text(payload: Any) -> str:
    if isinstance(payload, dict):
        err = payload.get("error", payload.get("detail", payload.get("message", payload)))
        if isinstance(err, dict):
            err = err.get("message", err)
        return _one_line(str(err))
    return _one_line(str(payload)) or "(empty answer)"
