"""What ``kldcard import-llama-log`` reports about a pasted llama-perplexity block: a JSON document and
labelled text lines. KLD here is llama.cpp's: KL(P_base ‖ Q_candidate), forward, in nats."""

from __future__ import annotations

from typing import Any

from kldcard.llamacpp.log import LlamaLog


def log_document(log: LlamaLog, *, floor_nats: float) -> dict[str, Any]:
    """The structured form: the parsed statistics, card ``results`` and the disclosures the tool implies."""
    return {
        "llama_perplexity": log.to_dict(),
        "results": log.results(),
        "implied_disclosures": log.implied_disclosures(floor_nats=floor_nats),
    }


def log_lines(log: LlamaLog, *, floor_nats: float) -> list[str]:
    """The text form; every number says what it is."""
    v = log.values
    out = [f"llama-perplexity log ({log.format} format); KLD = KL(P_base || Q_candidate), forward, nats"]
    if "kld_mean" in v:
        out.append(f"  mean KLD      {v['kld_mean']:.6f} ± {v.get('kld_se', float('nan')):.6f} nats (token mean ± i.i.d. SE)")
    for k in ("kld_median", "kld_max", "kld_min"):
        if k in v:
            out.append(f"  {k.replace('kld_', '') + ' KLD':<13} {v[k]:.6f} nats")
    for k, x in log.kld_percentiles.items():
        out.append(f"  {k + '% KLD':<13} {x:.6f} nats")
    if "same_top" in v:
        out.append(f"  same top p    {100 * v['same_top']:.3f} %")
    if "rms_dp" in v:
        out.append(f"  RMS Δp        {100 * v['rms_dp']:.3f} %")
    out.append(f"  chunks        {log.n_chunks}, n_ctx {log.n_ctx}, scored tokens {log.n_scored}")
    out.append(f"  implied       forward direction; positions n_ctx//2..n_ctx-2 per chunk; {floor_nats:g}-nat floor; "
               "token mean ± i.i.d. SE")
    out.extend(f"  note: {n}" for n in log.notes)
    return out
