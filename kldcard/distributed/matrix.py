"""Matrix runs: many references × many candidates × many prompts, planned as one task graph.

Captures are matched by prompt: a reference and a candidate are compared when their token ids and
positions are identical (same ``token_ids_sha256`` and ``positions_sha256``; a "prompt" is that pair of
hashes, labelled by the manifest's text name). Every pair's tasks go to the cluster at once, so the
scheduler balances the whole study; without a cluster each pair runs through the local streaming
:func:`kldcard.compare.run.compare`. Results come back as one table (JSON + Markdown) whose entries are
full compare results, which ``kldcard render`` takes as they are.

All divergences in nats; forward = KL(P_ref ‖ P_cand); full vocabulary (or the aligned common prefix).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kldcard.compare.summary import DEFAULT_PERCENTILES
from kldcard.distributed.cluster import run_tasks, total_threads
from kldcard.distributed.compare import CompareJob
from kldcard.distributed.urls import UrlCapture, open_capture_url
from kldcard.errors import UsageError

__all__ = ["MatrixPlan", "MatrixTable", "plan_matrix", "run_matrix"]

FORWARD = "KL(P_ref || P_cand)"


def _model_label(cap: UrlCapture) -> str:
    m = cap.manifest.model
    extra = m.quantization or m.dtype
    return f"{m.name} ({extra})" if extra else m.name


def _prompt_key(cap: UrlCapture) -> str:
    return f"{cap.manifest.token_ids_sha256[:12]}-{cap.manifest.positions_sha256[:12]}"


def _prompt_label(cap: UrlCapture) -> str:
    t = cap.manifest.text
    return (t.name if t is not None and t.name else None) or f"tokens {cap.manifest.token_ids_sha256[:12]}"


@dataclass
class MatrixEntry:
    reference: str
    candidate: str
    prompt: str  # label
    prompt_key: str
    reference_label: str
    candidate_label: str


@dataclass
class MatrixPlan:
    """Which reference is compared with which candidate, on which prompt."""

    entries: list[MatrixEntry]
    captures: dict[str, UrlCapture] = field(repr=False)
    unmatched: list[str] = field(default_factory=list)  # captures with no partner on the same prompt

    @property
    def n_positions(self) -> int:
        return sum(self.captures[e.reference].n_positions for e in self.entries)


def plan_matrix(references: Sequence[str | os.PathLike], candidates: Sequence[str | os.PathLike], *,
                verify: bool = True, mmap: bool = True) -> MatrixPlan:
    """Pair every reference with every candidate of the same prompt (identical token ids and
    positions). Raises UsageError when no pair matches."""
    if not references or not candidates:
        raise UsageError("give at least one --reference and one --candidate capture")
    caps: dict[str, UrlCapture] = {}
    for u in [*references, *candidates]:
        u = str(u)
        if u not in caps:
            caps[u] = open_capture_url(u, verify=verify, mmap=mmap)
    entries, paired = [], set()
    for r in map(str, references):
        for c in map(str, candidates):
            if r == c or _prompt_key(caps[r]) != _prompt_key(caps[c]):
                continue
            entries.append(MatrixEntry(r, c, _prompt_label(caps[r]), _prompt_key(caps[r]), _model_label(caps[r]),
                                       _model_label(caps[c])))
            paired |= {r, c}
    if not entries:
        raise UsageError("no reference and candidate share a prompt (identical token ids and positions); "
                         "nothing to compare")
    unmatched = [u for u in caps if u not in paired]
    return MatrixPlan(entries, caps, unmatched)


@dataclass
class MatrixTable:
    """One row per compared pair (values in nats, forward = KL(P_ref ‖ P_cand)) and the full results."""

    rows: list[dict[str, Any]]
    results: list[Any]  # kldcard.compare.run.CompareResult, same order as rows
    unmatched: list[str]
    scheduler: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "kldcard-matrix",
            "version": 1,
            "units": "nats",
            "direction": {"forward_kl": FORWARD, "reverse_kl": "KL(P_cand || P_ref)", "js": "Jensen-Shannon"},
            "statistic": "token mean over the scored positions; SE tokens i.i.d.; CI seeded bootstrap",
            "scheduler": self.scheduler,
            "rows": self.rows,
            "unmatched": self.unmatched,
            "results": [json.loads(r.model_dump_json()) for r in self.results],
        }

    def markdown(self) -> str:
        lines = [
            f"Forward KL = {FORWARD}, token mean over the scored positions, nats, float64; "
            "CI = seeded bootstrap; vocabulary = entries compared.",
            "",
            "| prompt | reference | candidate | positions | vocabulary | forward KL mean ± SE | CI | p99 | "
            "top-1 agreement | RMS Δp |",
            "|---|---|---|---:|---:|---:|---|---:|---:|---:|",
        ]
        for r in self.rows:
            se = f" ± {r['forward_kl_se']:.3g}" if r["forward_kl_se"] is not None else ""
            ci = f"[{r['forward_kl_ci'][0]:.4g}, {r['forward_kl_ci'][1]:.4g}]" if r["forward_kl_ci"] else "–"
            rms = f"{r['rms_delta_p']:.3%}" if r["rms_delta_p"] is not None else "–"
            lines.append(
                f"| {r['prompt']} | {r['reference_label']} | {r['candidate_label']} | {r['n_positions']:,} | "
                f"{r['vocabulary']:,} | {_g(r['forward_kl_mean'])}{se} | {ci} | {_g(r['forward_kl_p99'])} | "
                f"{r['top1_agreement']:.4%} | {rms} |"
            )
        return "\n".join(lines) + "\n"


def _g(x: float | None) -> str:
    return "–" if x is None else ("inf" if math.isinf(x) else f"{x:.4g}")


def _row(e: MatrixEntry, res) -> dict[str, Any]:
    f = res.forward_kl
    return {
        "prompt": e.prompt,
        "prompt_key": e.prompt_key,
        "reference": e.reference,
        "candidate": e.candidate,
        "reference_label": e.reference_label,
        "candidate_label": e.candidate_label,
        "n_positions": res.positions.n_scored,
        "vocabulary": res.vocabulary.compared_vocab_size,
        "forward_kl_mean": f.mean,
        "forward_kl_se": f.se,
        "forward_kl_ci": [f.ci_low, f.ci_high] if f.ci_low is not None else None,
        "forward_kl_p99": f.percentiles.get("99"),
        "forward_kl_max": f.max,
        "reverse_kl_mean": res.reverse_kl.mean,
        "js_mean": res.js.mean,
        "top1_agreement": res.top1_agreement,
        "rms_delta_p": res.rms_delta_p,
        "ln_ppl_ratio": res.perplexity.ln_ppl_ratio if res.perplexity else None,
    }


def run_matrix(plan: MatrixPlan, client=None, *, align_vocab: str | None = None, buckets=None,
               percentiles: Sequence[float] = DEFAULT_PERCENTILES, bootstrap: int = 1000, level: float = 0.95,
               seed: int = 0, threads: int | None = None, task_positions: int | None = None, mmap: bool = True,
               progress: Callable[[int], None] | None = None, slow_s: float = 0.0) -> MatrixTable:
    """Run every pair of ``plan``: on ``client`` (a Dask cluster) as one task graph, or locally
    (streaming, bounded memory) without one. ``progress(n_positions)`` as work finishes."""
    summary = dict(buckets=buckets, percentiles=percentiles, bootstrap=bootstrap, level=level, seed=seed)
    results = []
    if client is None:
        from kldcard.compare.run import compare

        for e in plan.entries:
            ref, cand = plan.captures[e.reference], plan.captures[e.candidate]
            if ref.memory_mapped and cand.memory_mapped:
                r = compare(ref._local, cand._local, align_vocab=align_vocab, threads=threads, progress=progress,
                            **summary)
            else:  # remote URLs without a cluster: run the same tasks in this process
                job = CompareJob(ref, cand, align_vocab=align_vocab, task_positions=task_positions, mmap=mmap)
                for k, (fn, args) in enumerate(job.tasks()):
                    job.add(fn(*args))
                    if progress:
                        progress(job.weights()[k])
                r = job.result(threads=1, **summary)[0]
            results.append(r)
    else:
        jobs = [CompareJob(plan.captures[e.reference], plan.captures[e.candidate], align_vocab=align_vocab,
                           task_positions=task_positions, mmap=mmap, slow_s=slow_s) for e in plan.entries]
        tasks, owner, weights = [], [], []
        for j, job in enumerate(jobs):
            tasks += job.tasks()
            weights += job.weights()
            owner += [j] * len(job.ranges)
        run_tasks(client, tasks, on_result=lambda i, res: jobs[owner[i]].add(res), progress=progress,
                  weights=weights)
        n_threads = total_threads(client)
        results = [job.result(threads=n_threads, **summary)[0] for job in jobs]
    rows = [_row(e, r) for e, r in zip(plan.entries, results)]
    scheduler = None if client is None else str(client.scheduler.address)
    return MatrixTable(rows, results, plan.unmatched, scheduler)


def write_table(table: MatrixTable, path: str | os.PathLike, markdown: str | os.PathLike | None = None,
                results_dir: str | os.PathLike | None = None) -> list[Path]:
    """Write the table JSON (and Markdown, and one compare-result JSON per pair for ``kldcard render``)
    atomically. Returns the paths written."""
    from kldcard.compare.io import write_result
    from kldcard.files import output_errors, write_atomic

    written = []
    p = Path(path)
    with output_errors(p):
        write_atomic(p, json.dumps(table.to_dict(), indent=2, ensure_ascii=False) + "\n")
    written.append(p)
    if markdown:
        m = Path(markdown)
        with output_errors(m):
            write_atomic(m, table.markdown())
        written.append(m)
    if results_dir:
        d = Path(results_dir)
        for k, (row, res) in enumerate(zip(table.rows, table.results)):
            name = f"{k:03d}-{_slug(row['prompt'])}-{_slug(Path(row['reference']).name)}-vs-" \
                   f"{_slug(Path(row['candidate']).name)}.json"
            written.append(write_result(res, d / name))
    return written


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s)[:40]
