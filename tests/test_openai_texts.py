"""Serving capture on awkward texts against the real llama-cpp-python server (loopback), and a slow
server that is not an unreachable one.

The licence-like text (runs of spaces, indentation) failed to align before issue 19; the mixed text
(tabs, CRLF, emoji, CJK, long numbers, ~3,000 bytes) is longer than one piece, so it is sent in pieces,
each its own request and context. Each is checked against the local llama.cpp capture of the same
ids (per piece) to the top k. The server spends ~0.3 s per prompt token here (a Python sort of the
151,936-entry vocabulary per token), which is why the pieces exist.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_openai_capture import _free_port, _start_server, _stop

from kldcard.capture.openai_capture import capture_openai
from kldcard.capture.run import run_capture
from kldcard.cli.main import main

pytestmark = pytest.mark.engines

DATA = Path(__file__).parent / "data" / "openai"
K = 10


def _mixed_text(path: Path) -> Path:
    """~3,000 bytes (~820 Qwen3 tokens): English prose in tab-indented lines with CRLF line ends and runs
    of spaces, a few emoji, a CJK line and long numbers."""
    rng = np.random.default_rng(7)
    words = ("the keeper wrote in the ledger that the lamp was lit at dusk and the tide turned "
             "before the bell rang twice over the harbour").split()
    lines = []
    for i in range(35):
        w = " ".join(rng.choice(words, size=14))
        lines.append(f"\t{w.capitalize()}.   Entry {i:02d}\r\n")
    lines[5] = "\t\tStorm warning 🌊⚓ at 04:00, all boats in 🙂\r\n"
    lines[12] = "\t灯台の記録：潮が満ちた。  한국어 문장도 있습니다。\r\n"
    lines[20] = "\tSerial 31415926535897932384626433832795028841971 and 2718281828459045\r\n"
    path.write_bytes("".join(lines).encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def server(tiny_qwen3):
    proc, url = _start_server(tiny_qwen3["gguf_f32"])
    yield url
    _stop(proc)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64) - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _check_against_local(res, text: Path, gguf: Path, tmp: Path) -> float:
    """Every reported (id, log-prob) equals the local llama.cpp value of the same piece; returns the
    share of positions whose reported ids are exactly the local top k."""
    cap = res.capture
    raw = text.read_bytes().decode("utf-8")
    full = 0
    for w, ((t0, n), (c0, c1)) in enumerate(zip(res.pieces, res.piece_chars)):
        piece = tmp / f"piece{w}.txt"
        piece.write_bytes(raw[c0:c1].encode("utf-8"))
        local_ids = run_capture("llama.cpp", gguf, piece, tmp / f"local{w}", positions="all", store_dtype="f32",
                                progress=False).capture
        assert np.array_equal(local_ids.token_ids, cap.token_ids[t0 : t0 + n])
        ls = _log_softmax(local_ids.logits_f32(0, local_ids.n_positions))
        rows = [r for r, p in enumerate(cap.positions) if t0 <= p < t0 + n]
        assert rows and t0 not in cap.positions.tolist()  # a request's first position is never reported
        local_pos = local_ids.positions.tolist()
        for r in rows:
            p = int(cap.positions[r]) - t0
            if p == n - 1 and p not in local_pos:
                # After the piece's last token: predicts the next piece's first token, which a local
                # capture of the piece alone does not score ("all" stops one short).
                continue
            row = ls[local_pos.index(p)]
            ids = cap.topk_ids[r][cap.topk_ids[r] >= 0]
            np.testing.assert_allclose(cap.topk_logprobs[r][: len(ids)], row[ids], atol=2e-5)
            top = set(np.argsort(-row)[:K].tolist())
            assert set(ids.tolist()) <= top | {int(cap.token_ids[t0 + p])}
            full += set(ids.tolist()) == top
    return full / len(cap.positions)


def test_licence_text_with_space_runs_aligns_and_agrees(server, tiny_qwen3, tmp_path):
    text = DATA / "licence.txt"
    res = capture_openai(server, "tiny", text, tmp_path / "s", top_k=K, vocab_gguf=tiny_qwen3["gguf_f32"],
                         timeout=900, retries=1, progress=False)
    assert len(res.pieces) == 1 and res.n_tokens > 150
    assert any("prompt sent as text (the server does not take token ids)" in n for n in res.capture.manifest.notes)
    assert _check_against_local(res, text, tiny_qwen3["gguf_f32"], tmp_path) >= 0.8


def test_long_mixed_text_goes_in_pieces_and_agrees(server, tiny_qwen3, tmp_path):
    text = _mixed_text(tmp_path / "mixed.txt")
    assert 2800 <= len(text.read_bytes()) <= 3300
    res = capture_openai(server, "tiny", text, tmp_path / "s", top_k=K, vocab_gguf=tiny_qwen3["gguf_f32"],
                         timeout=900, retries=1, piece_tokens=256, progress=False)
    m = res.capture.manifest
    assert len(res.pieces) >= 3 and m.context.n_chunks == len(res.pieces)
    assert sum(n for _, n in res.pieces) == res.n_tokens and all(n <= 256 for _, n in res.pieces)
    assert any("pieces of at most 256 tokens" in n for n in m.notes)
    # Byte-fragment ids (emoji, CJK) decode to "" on the server and cannot be reported: fewer exact rows.
    assert _check_against_local(res, text, tiny_qwen3["gguf_f32"], tmp_path) >= 0.5


class _SlowServer(http.server.BaseHTTPRequestHandler):
    """Answers like llama-cpp-python at once, except that completions take longer than the client waits."""

    def _json(self, obj) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting, which is the point

    def do_GET(self):
        if self.path == "/v1/models":
            self._json({"object": "list", "data": [{"id": "tiny"}]})
        elif self.path == "/openapi.json":
            self._json({"info": {"title": "🦙 llama.cpp Python API", "version": "0.3.36"}})
        else:
            self.send_response(404)
            self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n))
        if self.path == "/extras/tokenize":
            self._json({"tokens": [ord(c) for c in body["input"]]})
        elif self.path == "/v1/completions":
            time.sleep(3)
            self._json({"error": "too late"})

    def log_message(self, *a):
        pass


def test_a_slow_server_is_not_called_unreachable(tmp_path, capsys):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowServer)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        capsys.readouterr()
        t0 = time.monotonic()
        rc = main(["capture", "--engine", "openai", "--base-url", f"http://127.0.0.1:{srv.server_address[1]}",
                   "--model", "tiny", "--text", str(DATA / "short.txt"), "--out", str(tmp_path / "o"),
                   "--timeout", "1", "--retries", "3"])
        waited = time.monotonic() - t0
        err = capsys.readouterr().err
    finally:
        srv.shutdown()
        srv.server_close()
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "POST /v1/completions gave no answer within 1 s" in err and "GET /v1/models" in err
    assert "--timeout" in err and "cannot reach" not in err
    assert waited < 3 * 1 + 2  # the timed-out completion was not resent three more times
    assert not (tmp_path / "o").exists()


def test_free_port_is_refused_not_timed_out(tmp_path, capsys):
    capsys.readouterr()
    assert main(["capture", "--engine", "openai", "--base-url", f"http://127.0.0.1:{_free_port()}", "--model", "tiny",
                 "--text", str(DATA / "short.txt"), "--out", str(tmp_path / "o"), "--retries", "0"]) == 2
    assert "connection refused" in capsys.readouterr().err
