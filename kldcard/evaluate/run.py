"""``kldcard evaluate``: token parity, the reference once, every candidate in one pass, card, lint.

:func:`evaluate` runs a :class:`~kldcard.evaluate.project.Project`:

1. plan: the content key of the reference and of every candidate (:mod:`kldcard.evaluate.cache`);
   finished candidates are read back, not rerun;
2. token parity across every engine of the job (a mismatch stops everything before any capture);
3. the reference captured once into the cache (float32, atomic), or an existing capture;
4. every pending candidate run through its engine with :class:`~kldcard.evaluate.stream.StreamingComparer`
   as the capture's sink: rows are compared as they leave the engine, no candidate logits are
   stored (unless the candidate asks to ``keep`` them); per-token values and the result are written
   to the cache, the result last;
5. the card rendered (section, ``kld_evaluation``, model-index; optional plot) and linted.

One progress bar covers every engine run of the job (positions, with ETA). Divergences in nats;
forward = KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kldcard import __version__
from kldcard.errors import InputError
from kldcard.evaluate.cache import ResultCache, check_free_disk, content_key, engine_versions
from kldcard.evaluate.project import CandidateSpec, ModelSpec, Project

__all__ = ["CandidateOutcome", "EvaluateResult", "evaluate", "rank_candidates"]


@dataclass
class CandidateOutcome:
    name: str
    key: str
    result_path: Path
    per_token_path: Path
    cached: bool
    seconds: float = 0.0
    quantization: dict[str, Any] | None = None


@dataclass
class EvaluateResult:
    reference_key: str
    reference_cached: bool
    candidates: list[CandidateOutcome] = field(default_factory=list)
    card: Path | None = None
    plot: Path | None = None
    findings: int | None = None
    ranking: Any = None
    seconds: float = 0.0
    evaluation: Any = None  # the KldEvaluation rendered into the card
    served: list[dict] = field(default_factory=list)  # card entries of served candidates (kldcard.evaluate.served)

    @property
    def evaluated(self) -> list[str]:
        return [c.name for c in self.candidates if not c.cached]


def rank_candidates(results: list, outcomes: list[CandidateOutcome], control: str | None = None) -> Any:
    """The paired ranking of the candidates on the same positions (:func:`kldcard.compare.rank.rank_results`:
    block-bootstrap intervals of the per-position ΔKLD), or None with fewer than two candidates."""
    if len(results) < 2:
        return None
    import numpy as np

    from kldcard.compare.rank import rank_results

    columns = []
    for o in outcomes:
        with np.load(o.per_token_path) as z:
            columns.append({k: z[k] for k in z.files})
    return rank_results(results, columns, control=control, paths=[str(o.per_token_path) for o in outcomes])


def _run_parts(p: Project, spec: ModelSpec, cache: ResultCache) -> dict[str, Any]:
    from kldcard.engines import canonical_name

    engine = canonical_name(spec.engine or "")
    return {"engine": engine, "versions": engine_versions(engine), "files": cache.files_sha256(p.path(spec.model)),
            "settings": spec.settings, "positions": p.positions, "n_ctx": p.n_ctx, "protocol": p.protocol,
            "kldcard": __version__}


def _positions_estimate(n_tokens: int, meta) -> int:
    every = getattr(meta.positions, "every_n", None)
    return -(-n_tokens // every) if every else n_tokens


def _check_disclosures(p: Project) -> None:
    """Refuse before any engine runs when the card would lack a disclosure no capture can supply."""
    if not p.card:
        return
    d = p.disclosures
    missing = []
    if not (d.get("reference") or {}).get("model"):
        missing.append("disclosures.reference.model (the reference's repo id or file name)")
    if p.text.source is None and not (d.get("evaluation_text") or {}).get("source"):
        missing.append("text.source ({dataset, config, split, revision}, {url} or {repo_file, sha256})")
    if d.get("calibration") is None and any(c.calibration is None and c.name not in (d.get("candidates") or {})
                                            for c in p.candidates):
        missing.append("calibration (disclosures.calibration for all, or per candidate; {none: true} if none)")
    if missing:
        raise InputError("the card needs disclosures that captures cannot know: " + "; ".join(missing))


def _estimate_positions(p: Project, parity: dict | None) -> int | None:
    """Positions per engine run before the reference exists (for the bar's ETA only)."""
    n = (parity or {}).get("tokens_checked")
    if not n:
        return None
    if p.protocol or p.positions == "second-half":
        return n // 2
    if p.positions.startswith("every:"):
        return max(1, n // int(p.positions.split(":")[1].split("@")[0] or 1))
    return n


def _checked_writer(advance: Callable[[int], None] | None):
    """CaptureWriter for the reference, refusing up front when the disk cannot hold it."""
    from kldcard.capture.store import CaptureWriter

    class Writer(CaptureWriter):
        def __init__(self, out_dir, **kw):
            n = _positions_estimate(len(kw["token_ids"]), kw["meta"])
            check_free_disk(Path(out_dir).parent, n * int(kw["n_vocab"]) * (4 if kw.get("dtype") == "f32" else 2),
                            f"the reference capture ({n} positions x {kw['n_vocab']} logits)")
            super().__init__(out_dir, **kw)

        def append(self, positions, logits):
            super().append(positions, logits)
            if advance:
                advance(len(positions))

    return Writer


def _warm_kernel(ref_dtype: str):
    """Load the compiled divergence kernel for (reference rows, float32 candidate rows) on a thread
    while the main thread loads the candidate's model: numba's cache load takes ~0.3 s (a compile
    on a cold cache, minutes), llama.cpp's model load and tokenizer run in C with the GIL released."""
    import threading

    import numpy as np

    # imported here, not on the thread: two threads importing kldcard.compare's modules at once can
    # each see the other's half-initialised module
    from kldcard.compare.divergence import RowKernel, TokenDivergence
    from kldcard.compare.io import write_per_token  # noqa: F401 - the rest of the package, same reason

    def run() -> None:
        try:
            one = np.zeros(1, np.int64)
            RowKernel(2).fill(np.zeros((1, 2), ref_dtype), np.zeros((1, 2), np.float32),
                              TokenDivergence.empty(one, one), 0)
        except Exception:  # noqa: S110 - only a head start: the real first call compiles and reports
            pass

    t = threading.Thread(target=run, name="kldcard-warm-kernel", daemon=True)
    t.start()
    return t


def _capture(spec: ModelSpec, p: Project, out: Path, writer, text_name: str | None):
    from kldcard.capture.run import run_capture

    return run_capture(spec.engine, p.path(spec.model), p.path(p.text.path), out, positions=p.positions,
                       n_ctx=p.n_ctx, protocol=p.protocol, text_name=text_name, overwrite=True, progress=False,
                       store_dtype="f32", writer=writer, digest=False, **spec.settings)


def evaluate(project: Project, *, say: Callable[[str], None] = print, progress: bool | None = None,
             render: bool = True) -> EvaluateResult:
    """Run ``project`` (see the module docstring); returns what was done and where it went."""
    from kldcard.capture.fingerprint import read_text
    from kldcard.capture.store import open_capture
    from kldcard.progress import position_progress

    t_start = time.perf_counter()
    p = project
    _check_disclosures(p)
    p.check_outputs()  # the card, sidecar and plot are no input of this run (kldcard.files' policy)
    cache = ResultCache(p.path(p.cache), say)
    cache.remove_stale_work()
    text_path = p.path(p.text.path)
    text_str, text_bytes = read_text(text_path)
    import hashlib

    text_sha = hashlib.sha256(text_bytes).hexdigest()

    # 1. plan ------------------------------------------------------------------------------------
    if p.reference.basefile:
        # llama-perplexity's base file, converted once into a capture (decoded log-probabilities, the
        # floor's truncated entries masked; the manifest discloses the floor)
        base_path = p.path(p.reference.basefile)
        ref_key = content_key({"basefile": cache.files_sha256(base_path), "kldcard": __version__})
        ref_dir = cache.reference_dir(ref_key)
        ref = cache.open_reference(ref_key)
        if ref is None:
            from kldcard.llamacpp.basefile import open_base_file
            from kldcard.llamacpp.convert import base_to_capture

            t = time.perf_counter()
            with open_base_file(base_path) as base:
                check_free_disk(ref_dir.parent, base.n_chunk * len(base.positions(0)) * base.n_vocab * 4,
                                "the reference converted from the base file")
                conv = base_to_capture(base, ref_dir, model_name=base_path.name, overwrite=True)
            say(f"reference {base_path.name}: {conv.n_positions} positions converted from the base file "
                f"({time.perf_counter() - t:.1f} s)")
            ref = open_capture(ref_dir, verify=False)
            cache.remember_capture(ref)
        ref_cached = True
    elif p.reference.capture:
        # the user's own capture: verified (through the hash cache), and a damaged one is an error
        ref_dir = p.path(p.reference.capture)
        ref = open_capture(ref_dir, verify=True, sha256=cache.hashes.sha256)
        from kldcard.compare.provenance import check_provenance

        check_provenance(ref, "reference", text=text_path)
        ref_key = content_key({"capture": ref.manifest.model_dump(mode="json")})
        ref_cached = True
    else:
        ref_key = content_key({"reference": _run_parts(p, p.reference, cache), "text": text_sha})
        ref_dir = cache.reference_dir(ref_key)
        ref = cache.open_reference(ref_key)
        ref_cached = ref is not None
    out = EvaluateResult(ref_key, ref_cached)

    def cand_parts(c: CandidateSpec, ref_cap) -> dict[str, Any]:
        m = ref_cap.manifest
        return {"candidate": _run_parts(p, c, cache), "reference": ref_key, "text": text_sha,
                "token_ids": m.token_ids_sha256, "positions": m.positions_sha256,
                "align_vocab": p.align_vocab, "bootstrap": [p.bootstrap, p.seed], "keep": c.keep}

    found: dict[str, tuple] = {}  # candidate name -> (verified result, its entry)
    if ref is not None:
        for c in p.candidates:
            if not c.server:
                parts = cand_parts(c, ref)
                hit = cache.load_result(content_key(parts), parts, c.name)
                if hit is not None:
                    found[c.name] = hit
    pending = [c for c in p.candidates if not c.server and c.name not in found]
    n_served = sum(1 for c in p.candidates if c.server)
    warm = _warm_kernel(ref.raw_dtype.str if ref is not None else "<f4") if pending else None
    say(f"kldcard evaluate: reference {'cached' if ref_cached else 'to capture'}, {len(p.candidates)} candidate(s), "
        f"{len(p.candidates) - n_served - len(pending)} cached, {len(pending)} to evaluate"
        + (f", {n_served} served (asked again)" if n_served else "") + f" (cache: {cache.root})")

    # 2. token parity (only when something runs: cached results were checked when they were made) ----
    parity = None
    specs = [(c.engine, c.model) for c in ([] if p.reference.capture or p.reference.basefile else [p.reference])
             + [c for c in p.candidates if not c.server]  # a server's ids are checked against the reference's
             if c.engine and c.model]
    if specs:
        par_key = content_key({"parity": [(e, cache.files_sha256(p.path(m))) for e, m in specs], "text": text_sha})
        parity = cache.read_parity(par_key)
        if parity is None and (pending or not ref_cached):
            from kldcard.tokens import parity_for_capture

            first, *others = [f"{e}:{p.path(m)}" for e, m in specs]
            parity = parity_for_capture(first, others, text_str)
            cache.write_parity(par_key, parity)
            say(f"token parity: {parity['outcome']}, {parity['tokens_checked']} token ids across "
                f"{', '.join(parity['engines'])}")

    text_name = p.text.name
    n_runs = (0 if ref_cached else 1) + len(pending)
    est = ref.n_positions if ref is not None else _estimate_positions(p, parity)
    with position_progress((est or 1) * max(n_runs, 1), "kldcard evaluate", enabled=progress is not False and n_runs > 0,
                           unit="positions") as advance:
        # 3. the reference, once ------------------------------------------------------------------
        if ref is None:
            t = time.perf_counter()
            _capture(p.reference, p, ref_dir, _checked_writer(advance), text_name)
            ref = open_capture(ref_dir, verify=False)
            cache.remember_capture(ref)  # its writer hashed every file: no second read of gigabytes
            say(f"reference {Path(p.reference.model).name}: {ref.n_positions} positions captured "
                f"({time.perf_counter() - t:.1f} s)")
        # 4. the candidates, one pass each ---------------------------------------------------------
        from kldcard.capture.quantization import model_quantization

        results: list = []
        for c in p.candidates:
            if c.server:  # asked again every run: weights behind a URL are not content-addressable
                from kldcard.evaluate.served import evaluate_served

                t = time.perf_counter()
                out.served.append(evaluate_served(c, p, ref, cache.root / "served" / content_key({"served": c.name})))
                say(f"{c.name}: served, top-{c.top_k} log-probabilities ({time.perf_counter() - t:.1f} s)")
                continue
            parts = cand_parts(c, ref)
            key = content_key(parts)
            js, npz = cache.result_paths(key)
            if c.name in found:
                result, entry = found[c.name]
                out.candidates.append(CandidateOutcome(c.name, key, js, npz, True, quantization=entry.get("quantization")))
                results.append(with_identity(result, c))
                say(f"{c.name}: cached ({js.name[:12]})")
                continue
            t = time.perf_counter()
            quant = model_quantization(p.path(c.model)) if c.model else None
            result = _evaluate_candidate(c, p, ref, cache, key, advance)
            cache.store_result(key, parts, quant)  # last: the sealed entry marks the result complete
            secs = time.perf_counter() - t
            out.candidates.append(CandidateOutcome(c.name, key, js, npz, False, secs, quant))
            results.append(with_identity(result, c))
            say(f"{c.name}: evaluated ({secs:.1f} s)")
    if warm is not None:
        warm.join()

    from kldcard.render.depth import LONG_CONTEXT, onset_words

    for o, r in zip(out.candidates, results):  # long windows: where each candidate starts to disagree
        if r.depth is not None and r.depth.max_depth + 1 >= LONG_CONTEXT:
            say(f"{o.name}: {onset_words(r.depth)}")
    # A candidate measured across stacks on purpose carries the stack difference in its KLD: ranking it
    # with same-stack candidates would compare two different quantities, so it is left out (the card says so).
    specs = {c.name: c for c in p.candidates}
    same = [i for i, o in enumerate(out.candidates) if not specs[o.name].cross_stack]
    out.ranking = rank_candidates([results[i] for i in same], [out.candidates[i] for i in same])
    if render and p.card:
        from kldcard.evaluate.card import render_card

        out.card, out.plot, out.findings = render_card(p, results, out, parity, say)
    out.seconds = time.perf_counter() - t_start
    return out


def _evaluate_candidate(c: CandidateSpec, p: Project, ref, cache: ResultCache, key: str, advance):
    from kldcard.compare.io import write_per_token, write_result
    from kldcard.compare.run import build_result
    from kldcard.compare.summary import DEFAULT_PERCENTILES, BootstrapOptions
    from kldcard.evaluate.stream import comparer_for

    js, npz = cache.result_paths(key)
    make = comparer_for(ref, align_vocab=p.align_vocab, keep=p.path(c.keep))

    def writer(out_dir, **kw):
        w = make(out_dir, **kw)
        if advance:
            inner = w.append

            def append(pos, logits):
                inner(pos, logits)
                advance(len(pos))

            w.append = append
        return w

    scratch = cache.root / "tmp" / key  # never created: the comparer writes nothing there
    run = _capture(c, p, scratch, writer, p.text.name)
    cand = run.capture
    td = cand.divergence
    result = build_result(ref, cand, td, min(ref.n_vocab, cand.n_vocab),
                          "identical" if ref.n_vocab == cand.n_vocab else "common-prefix", None,
                          list(DEFAULT_PERCENTILES), BootstrapOptions(resamples=p.bootstrap, seed=p.seed), 1)
    write_per_token(td, npz)
    result.per_token_file = str(npz)
    write_result(result, js)  # then the caller seals the entry
    return result


def with_identity(result, c: CandidateSpec):
    """``result`` labelled as candidate ``c``: its name, stated quantization and path are the
    project's, never the cached file's, so renaming or swapping names cannot relabel a number (the
    cached result holds what the key proves: the files' sha256 and what their headers say)."""
    result = result.model_copy(deep=True)
    result.candidate.model.name = c.name  # the card's name for it (two engines may share one directory)
    if c.quantization:
        result.candidate.model.quantization = c.quantization
    result.candidate_path = f"{c.engine}:{c.model}"
    return result
