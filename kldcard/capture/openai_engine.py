"""Prompt log-probabilities from an OpenAI-compatible server (top-k only), with stdlib ``urllib``.

This module is the client (transport, server detection, tokenization, models); the three request
variants live in :mod:`.openai_prompt`, which imports this module (never the reverse):

- **llama-cpp-python** (``python -m llama_cpp.server``): ``/v1/completions`` with ``echo: true,
  logprobs: K, max_tokens: 1``. The prompt goes as token ids when the server takes them (0.3.x does
  not: its ``prompt`` is a string, a list of ids is a validation error, HTTP 422 or 500), else as
  text; the echoed entries are aligned with the ids by :mod:`.openai_align`. ``top_logprobs`` are
  ``{token string: logprob}`` dicts; strings are mapped back to ids with the model's GGUF
  (``--vocab-gguf``, exact) or the server's ``/extras/tokenize`` (one call per distinct string).
- **vLLM**: ``/v1/completions`` with the token ids and ``prompt_logprobs: K`` (``-1``: the whole
  vocabulary, where the server's ``--max-logprobs`` allows it); ids come back directly.
- **SGLang**: ``/generate`` with ``input_ids``, ``return_logprob``, ``logprob_start_len: 0`` and
  ``top_logprobs_num: K``.

Only the llama-cpp-python variant is exercised by the test suite (against the real server); the vLLM
and SGLang variants are implemented from their documented request and response shapes, untested here.

Every failure is an :class:`~kldcard.errors.InputError` with one line (exit 2): server unreachable,
no completions endpoint, no prompt log-probabilities, unknown model name, malformed answers, and a
slow server — which is not an unreachable one: the message says what answered and what timed out.
Connection failures and 502/503/504 are retried with exponential back-off; a timeout of a request that
makes the server compute is not (it would queue behind the abandoned one).
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

APIS = ("auto", "llama-cpp-python", "vllm", "sglang")
_RETRY_STATUS = (502, 503, 504)
# One new token, greedy: SGLang's /generate must generate something, and only the prompt matters.
SGLANG_SAMPLING: dict[str, Any] = {"max_new_tokens": 1, "temperature": 0.0}


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
        self.answered: list[str] = []  # "GET /v1/models", ...: what this server did answer
        self.ids_accepted: bool | None = None  # does /v1/completions take a token-id prompt?
        self.bos_id: int | None = None  # the server's BOS id, when a local GGUF tells it
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
        bos = int(llm.token_bos())
        llm.close()
        self.local_vocab, self._tok_cache = table, {}
        # llama-cpp-python drops echoed entries equal to this id (a default one when the GGUF has none).
        self.bos_id = bos if bos >= 0 else None
        return n

    # -- transport ---------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, slow: bool = False) -> tuple[int, Any]:
        """(HTTP status, decoded JSON or text). Raises InputError when the server cannot be reached.

        ``slow``: a request that makes the server compute (prompt log-probabilities). Its timeout is
        not retried — the server goes on computing the abandoned request and runs requests one at a
        time, so a resend only queues behind it — and the error says what did answer, because a
        busy server is not an unreachable one."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    status, payload = resp.status, _decode(resp.read())
                self.answered.append(f"{method} {path}")
                return status, payload
            except urllib.error.HTTPError as exc:
                payload = _decode(exc.read())
                self.answered.append(f"{method} {path}")
                if exc.code in _RETRY_STATUS:
                    last = f"HTTP {exc.code}"
                    continue
                return exc.code, payload
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ConnectionRefusedError):
                    last = "connection refused (is the server running?)"
                elif isinstance(reason, (socket.timeout, TimeoutError)):
                    if slow or self.answered:
                        raise self._timed_out(method, path, time.monotonic() - t0) from None
                    last = f"no answer within {self.timeout:g} s"
                else:
                    last = _one_line(str(reason))
        raise InputError(f"cannot reach the server at {self.base_url}: {last} ({self.retries + 1} attempts)")

    def _timed_out(self, method: str, path: str, waited: float) -> InputError:
        seen = sorted(set(self.answered))
        alive = (f"the server is up (it answered {', '.join(seen)})" if seen
                 else "nothing else was asked of it yet")
        return InputError(
            f"{self.base_url}: {method} {path} gave no answer within {waited:.0f} s (--timeout {self.timeout:g}); "
            f"{alive} and is probably still computing the log-probabilities (llama-cpp-python spends a "
            "large fraction of a second per prompt token on a 150k vocabulary): raise --timeout or send "
            "smaller pieces with --piece-tokens"
        )

    def _post_ok(self, path: str, body: Any, what: str) -> Any:
        status, payload = self.request("POST", path, body)
        if status == 404:
            raise InputError(f"{self.base_url}{path} not found (HTTP 404): the server has no {what} endpoint")
        if status != 200:
            raise InputError(f"{self.base_url}{path}: HTTP {status}: {error_text(payload)}")
        if not isinstance(payload, dict):
            raise InputError(f"{self.base_url}{path}: answer is not a JSON object")
        return payload

    # -- server facts ------------------------------------------------------------------------

    @property
    def api(self) -> str:
        """``llama-cpp-python`` or ``vllm`` (detected once when ``api="auto"``)."""
        if self._api is None:
            status, payload = self.request("GET", "/get_model_info")  # SGLang only (it has /version too)
            if status == 200 and isinstance(payload, dict) and "model_path" in payload:
                self._api = "sglang"
                status, payload = self.request("GET", "/get_server_info")
                if status == 200 and isinstance(payload, dict):
                    self._version = str(payload.get("version", "unknown"))
                return self._api
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
                        "request (none of SGLang's /get_model_info, vLLM's /version, llama-cpp-python's "
                        "/openapi.json answered); pass --api llama-cpp-python, vllm or sglang"
                    )
        return self._api

    @property
    def version(self) -> str:
        if self._version is None:
            _ = self.api
            if self._version is None:
                path = {"vllm": "/version", "sglang": "/get_server_info"}.get(self.api, "/openapi.json")
                status, payload = self.request("GET", path)
                obj = payload if self.api in ("vllm", "sglang") else (payload or {}).get("info", {}) if isinstance(payload, dict) else {}
                self._version = str(obj.get("version", "unknown")) if status == 200 and isinstance(obj, dict) else "unknown"
        return self._version

    def models(self) -> list[str]:
        status, payload = self.request("GET", "/v1/models")
        if status == 404:
            raise InputError(f"{self.base_url}/v1/models not found (HTTP 404): not an OpenAI-compatible server")
        if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise InputError(f"{self.base_url}/v1/models: HTTP {status}: {error_text(payload)}")
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
        if self.api == "sglang":
            return self.sglang_tokenize(text)
        if self.api == "vllm":
            p = self._post_ok("/tokenize", {"model": model, "prompt": text, "add_special_tokens": True}, "tokenize")
        else:
            p = self._post_ok("/extras/tokenize", {"model": model, "input": text}, "tokenize")
        toks = p.get("tokens")
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            raise InputError(f"{self.base_url}: tokenize answer has no integer 'tokens' list")
        return toks

    def string_id(self, model: str, s: str) -> int | None:
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

    # -- SGLang's /generate (its tokenizer and prompt log-probabilities both answer there) ------------

    def sglang_generate(self, body: dict) -> dict:
        """POST /generate; the answer's ``meta_info`` with its ``input_token_logprobs`` list."""
        status, payload = self.request("POST", "/generate", body, slow=True)
        if status == 404:
            raise InputError(f"{self.base_url}/generate not found (HTTP 404): not an SGLang server")
        if status != 200 or not isinstance(payload, dict):
            raise InputError(f"{self.base_url}/generate: HTTP {status}: {error_text(payload)}")
        meta = payload.get("meta_info")
        if not isinstance(meta, dict) or not isinstance(meta.get("input_token_logprobs"), list):
            raise InputError(f"{self.base_url}/generate: no meta_info.input_token_logprobs in the answer")
        return meta

    def sglang_tokenize(self, text: str) -> list[int]:
        """SGLang reports the prompt's ids with its log-probabilities ([logprob, id, text] triples)."""
        meta = self.sglang_generate({"text": text, "sampling_params": SGLANG_SAMPLING, "return_logprob": True,
                                     "logprob_start_len": 0, "top_logprobs_num": 0})
        try:
            return [int(t[1]) for t in meta["input_token_logprobs"]]
        except (TypeError, ValueError, IndexError):
            raise InputError(f"{self.base_url}/generate: malformed input_token_logprobs") from None

    def completions(self, body: dict) -> tuple[int, Any]:
        """POST /v1/completions; (status, payload) for the caller to interpret (a timeout raises)."""
        return self.request("POST", "/v1/completions", body, slow=True)

    def completion_payload(self, status: int, payload: Any) -> dict:
        """The answer of a completions request, or one InputError line saying why it is unusable."""
        if status == 404:
            raise InputError(f"{self.base_url}/v1/completions not found (HTTP 404): not an OpenAI-compatible completions server")
        if status != 200:
            msg = error_text(payload)
            if "logprob" in msg.lower() or "logits_all" in msg.lower():
                raise InputError(f"{self.base_url} does not return prompt log-probabilities: {msg}")
            raise InputError(f"{self.base_url}/v1/completions: HTTP {status}: {msg}")
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise InputError(f"{self.base_url}/v1/completions: answer has no choices")
        return payload


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")


def error_text(payload: Any) -> str:
    if isinstance(payload, dict):
        err = payload.get("error", payload.get("detail", payload.get("message", payload)))
        if isinstance(err, dict):
            err = err.get("message", err)
        return _one_line(str(err))
    return _one_line(str(payload)) or "(empty answer)"
