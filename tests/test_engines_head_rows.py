"""The transformers adapter applies the output head to the scored rows only; the rows it returns are
the rows of the full forward pass, bit for bit (the head is a matrix product per row on these shapes)."""

from __future__ import annotations

import numpy as np
import torch

from kldcard.capture.engines import EngineSettings, open_model


def _full_logits(m, ids: np.ndarray) -> np.ndarray:
    """The model's own full forward over one chunk from an empty cache: every row's logits."""
    with torch.inference_mode():
        out = m.model(input_ids=torch.from_numpy(ids.astype(np.int64))[None])
    return out.logits[0].float().numpy()


def test_head_on_scored_rows_equals_full_head_sliced(tiny_qwen3, engines_text):
    with open_model("transformers", tiny_qwen3["hf"], EngineSettings(dtype="f32")) as m:
        ids = m.tokenize(engines_text.read_text(encoding="utf-8")).ids[:256]
        keep = np.arange(3, 256, 32)
        full = _full_logits(m, ids)[keep]
        m.begin_sequence(len(ids))
        kept = m.forward(ids, 0, keep)  # logits_to_keep
        m._has_keep = False  # the path for transformers without logits_to_keep: body, then head on the rows
        m.begin_sequence(len(ids))
        rows = m.forward(ids, 0, keep)
    assert kept.shape == rows.shape == (len(keep), m.n_vocab)
    assert np.array_equal(kept, full), float(np.abs(kept - full).max())
    assert np.array_equal(rows, full), float(np.abs(rows - full).max())
