"""llama-perplexity's ``--kl-divergence`` statistics, with its exact float32/double arithmetic.

Everything here reproduces ``tools/perplexity/perplexity.cpp`` (the llama.cpp vendored in the pinned
llama-cpp-python; ``docs/llamacpp.md`` has the line references), *not* kldcard's float64 kernels:
per-entry maths in float32 with glibc's ``expf`` (emulated exactly, :func:`~.basefile.expf`), row sums
of ``expf`` in double, per-token KLD and Δp stored as float32, global sums in double with ``nll²`` and
``Δp²`` squared in float32 first.

Direction: KLD is KL(P_base ‖ Q_candidate) — forward, with the base (reference) distribution decoded
from the uint16 file — in nats, summed over the entries whose decoded log p_base > −16 (absolute),
at positions n_ctx//2 … n_ctx−2 of every chunk. Token sums run in token order (llama.cpp's threads
merge in no fixed order, so its own output can differ from this in the last ulp).

Uncertainties are i.i.d. standard errors (no autocorrelation correction): ``SE = sqrt(v/(N−1))`` when
``v > 0`` and ``N > 10``, else 0; covariances are 0 when ``N < 10``. The final blocks are printed only
when ``N ≥ 100``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from kldcard.llamacpp.basefile import KLD_TERM_CUTOFF, split_records
from kldcard.llamacpp.libm import expf, log_f32, row_sums_in_order

F32 = np.float32
KLD_PERCENTILES = (0.999, 0.990, 0.950, 0.900, 0.100, 0.050, 0.010, 0.001)
DP_PERCENTILES = (0.999, 0.990, 0.950, 0.900, 0.750, 0.250, 0.100, 0.050, 0.010, 0.001)
MIN_TOKENS_FOR_FINAL = 100
CHUNK_HEADER = (
    "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS"
    "            Same top p"
)


def _seq_add(total: float, values: np.ndarray) -> float:
    """Add float64 ``values`` to ``total`` left to right (np.add.accumulate is a sequential loop)."""
    if len(values) == 0:
        return total
    return float(np.add.accumulate(np.concatenate(([total], np.asarray(values, dtype=np.float64))))[-1])


@dataclass
class PerToken:
    """Per-token values for a block of scored tokens (float32 as llama.cpp stores them)."""

    nll: np.ndarray  # candidate NLL, nats (float32)
    nll_base: np.ndarray  # base NLL from the uint16 record, nats (float32)
    kld: np.ndarray  # KL(P_base ‖ Q) per token, nats: double sum (float64); stored as float32 later
    p_diff: np.ndarray  # Δp = p_Q(target) − p_base(target) (float32)
    same_top: np.ndarray  # bool


def per_token(cand_logits: np.ndarray, base_raw: np.ndarray, targets: np.ndarray, n_vocab: int) -> PerToken:
    """llama.cpp's per-token quantities for candidate float32 logits ``[n, n_vocab]`` against raw base
    records ``[n, nv]`` and the target token ids ``[n]`` (the token each position predicts)."""
    z = np.ascontiguousarray(cand_logits, dtype=F32)
    scale, mn, codes = split_records(base_raw, n_vocab)
    rows = np.arange(len(z))
    targets = np.asarray(targets, dtype=np.int64)

    imax = np.argmax(z, axis=1)  # first maximum, like the strict '>' scan
    hi = z[rows, imax]
    sum_exp = row_sums_in_order(expf(z - hi[:, None]))
    lse = log_f32(sum_exp)
    nll = (hi + lse) - z[rows, targets]
    nll_base = -((scale * codes[rows, targets].astype(F32)) + mn)

    max_lse = hi + lse
    log_p_base = (scale[:, None] * codes.astype(F32)) + mn[:, None]
    imax_base = np.argmax(log_p_base, axis=1)  # first maximum ('i == 0 ||' then strict '>')
    terms = expf(log_p_base) * ((log_p_base - z) + max_lse[:, None])
    terms = np.where(log_p_base > KLD_TERM_CUTOFF, terms, F32(0.0))
    kld = row_sums_in_order(terms)

    p_diff = expf(-nll) - expf(-nll_base)
    return PerToken(
        nll.astype(F32), nll_base.astype(F32), kld, p_diff.astype(F32), imax == imax_base
    )


def mean_and_uncertainty(total: float, total2: float, count: int) -> tuple[float, float]:
    """(mean, SE) as llama.cpp: SE = sqrt((Σx²/N − m²)/(N−1)) if that variance > 0 and N > 10, else 0."""
    if count < 1:
        return 0.0, 0.0
    m = total / count
    v = total2 / count - m * m
    return m, (math.sqrt(v / (count - 1)) if v > 0 and count > 10 else 0.0)


def covariance(total_a: float, total_b: float, total_ab: float, count: int) -> float:
    """Covariance of two means: (Σab/N − (Σa/N)(Σb/N))/(N−1); 0 when N < 10."""
    if count < 10:
        return 0.0
    return (total_ab / count - (total_a / count) * (total_b / count)) / (count - 1)


def percentile(sorted_values: np.ndarray, fraction: float) -> np.float32:
    """llama.cpp's interpolated percentile of sorted float32 values, in float32 throughout:
    p = f·(N−1); i = ⌊p⌋; (1 − frac)·v[i] + frac·v[min(i+1, N−1)]; f ≤ 0 → min, f ≥ 1 → max."""
    v = sorted_values
    f = F32(fraction)
    if f <= 0:
        return F32(v[0])
    if f >= 1:
        return F32(v[-1])
    p = F32(f * F32(len(v) - 1))
    ip = int(p)
    frac = F32(p - F32(ip))
    return F32(F32(F32(1) - frac) * F32(v[ip]) + F32(frac * F32(v[min(ip + 1, len(v) - 1)])))


def median(sorted_values: np.ndarray) -> np.float32:
    """Middle value, or 0.5f·(sum of the two middle values) in float32 when N is even."""
    n = len(sorted_values)
    if n % 2:
        return F32(sorted_values[n // 2])
    return F32(F32(0.5) * F32(F32(sorted_values[n // 2]) + F32(sorted_values[n // 2 - 1])))


def _div(a: float, b: float) -> float:
    """C double division: x/0 is ±inf or nan, never an exception."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


@dataclass
class LlamaKldAccumulator:
    """Running sums of llama.cpp's ``kl_divergence_result`` plus the per-token float32 values."""

    sum_nll: float = 0.0
    sum_nll2: float = 0.0
    sum_nll_base: float = 0.0
    sum_nll_base2: float = 0.0
    sum_nll_nll_base: float = 0.0
    sum_kld: float = 0.0
    sum_kld2: float = 0.0
    sum_p_diff: float = 0.0
    sum_p_diff2: float = 0.0
    sum_p_diff4: float = 0.0
    max_p_diff: float = 0.0
    n_same_top: int = 0
    count: int = 0
    kld_values: list[np.ndarray] = field(default_factory=list)
    p_diff_values: list[np.ndarray] = field(default_factory=list)
    chunk_lines: list[str] = field(default_factory=list)

    def add(self, t: PerToken) -> None:
        """Add a block of per-token values, in token order."""
        f64 = np.float64
        self.sum_nll = _seq_add(self.sum_nll, t.nll.astype(f64))
        self.sum_nll2 = _seq_add(self.sum_nll2, (t.nll * t.nll).astype(f64))  # squared in float
        self.sum_nll_base = _seq_add(self.sum_nll_base, t.nll_base.astype(f64))
        self.sum_nll_base2 = _seq_add(self.sum_nll_base2, (t.nll_base * t.nll_base).astype(f64))
        self.sum_nll_nll_base = _seq_add(self.sum_nll_nll_base, (t.nll * t.nll_base).astype(f64))
        self.sum_kld = _seq_add(self.sum_kld, t.kld)
        self.sum_kld2 = _seq_add(self.sum_kld2, t.kld * t.kld)
        self.sum_p_diff = _seq_add(self.sum_p_diff, t.p_diff.astype(f64))
        p_diff2 = (t.p_diff * t.p_diff).astype(f64)  # float product, then double
        self.sum_p_diff2 = _seq_add(self.sum_p_diff2, p_diff2)
        self.sum_p_diff4 = _seq_add(self.sum_p_diff4, p_diff2 * p_diff2)
        if len(t.p_diff):
            self.max_p_diff = max(self.max_p_diff, float(np.max(np.abs(t.p_diff))))
        self.n_same_top += int(np.count_nonzero(t.same_top))
        self.count += len(t.nll)
        self.kld_values.append(t.kld.astype(F32))
        self.p_diff_values.append(t.p_diff.astype(F32))

    def end_chunk(self, chunk_number: int) -> str:
        """Record and return the cumulative per-chunk line llama-perplexity prints after chunk
        ``chunk_number`` (1-based)."""
        line = format_chunk_line(chunk_number, self)
        self.chunk_lines.append(line)
        return line

    def finish(self) -> LlamaKldStats:
        return LlamaKldStats.from_accumulator(self)


def format_chunk_line(chunk_number: int, acc: LlamaKldAccumulator) -> str:
    n = acc.count
    lp, lp_se = mean_and_uncertainty(acc.sum_nll, acc.sum_nll2, n)
    ppl = math.exp(lp)
    lb, lb_se = mean_and_uncertainty(acc.sum_nll_base, acc.sum_nll_base2, n)
    cov = covariance(acc.sum_nll, acc.sum_nll_base, acc.sum_nll_nll_base, n)
    ratio_unc = _sqrt(lp_se * lp_se + lb_se * lb_se - 2.0 * cov)
    kl, kl_se = mean_and_uncertainty(acc.sum_kld, acc.sum_kld2, n)
    mse, mse_se = mean_and_uncertainty(acc.sum_p_diff2, acc.sum_p_diff4, n)
    rms = math.sqrt(mse)
    rms_unc = _div(0.5, rms) * mse_se
    top = _div(acc.n_same_top, n)
    top_unc = _sqrt(_div(top * (1 - top), n - 1))
    return (
        f"{chunk_number:4d}"
        f"    {_c(ppl, '9.4')} ± {_c(ppl * lp_se, '9.4')}"
        f"    {_c(lp - lb, '10.5')} ± {_c(ratio_unc, '10.5')}"
        f"    {_c(kl, '10.5')} ± {_c(kl_se, '10.5')}"
        f"    {_c(100.0 * rms, '6.3')} ± {_c(100.0 * rms_unc, '6.3')} %"
        f"    {_c(100.0 * top, '6.3')} ± {_c(100.0 * top_unc, '6.3')} %"
    )


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else -math.nan


def _c(x: float, spec: str) -> str:
    """printf-style ``%<spec>f`` as glibc on x86 prints it: the NaN of an invalid operation (sqrt of a
    negative rounding residue, 0/0) carries the sign bit and prints as ``-nan``."""
    if math.isnan(x):
        width = int(spec.split(".")[0] or 0)
        return "-nan".rjust(width)
    return format(x, spec + "f")


def _pct_key(f: float) -> str:
    return f"{100 * f:.1f}"


@dataclass
class LlamaKldStats:
    """The numbers llama-perplexity prints. KLD in nats, KL(P_base ‖ Q); Δp and p as fractions (not %)."""

    n_tokens: int
    ppl_q: float
    ppl_q_unc: float
    ppl_base: float
    ppl_base_unc: float
    cor_ln_ppl: float
    ln_ppl_ratio: float
    ln_ppl_ratio_unc: float
    ppl_ratio: float
    ppl_ratio_unc: float
    ppl_diff: float
    ppl_diff_unc: float
    kld_mean: float
    kld_se: float
    kld_max: float
    kld_min: float
    kld_median: float
    kld_percentiles: dict[str, float]
    dp_mean: float
    dp_se: float
    dp_max: float
    dp_min: float
    dp_median: float
    dp_percentiles: dict[str, float]
    rms_dp: float
    rms_dp_unc: float
    same_top: float
    same_top_unc: float
    chunk_lines: list[str]

    @property
    def has_final_blocks(self) -> bool:
        return self.n_tokens >= MIN_TOKENS_FOR_FINAL

    def to_dict(self) -> dict:
        """JSON-ready: NaN and ±inf (undefined uncertainties, as llama.cpp computes them) become None."""
        d = nan_to_none(asdict(self))
        d["units"] = {"kld": "nats", "dp": "fraction", "same_top": "fraction"}
        d["direction"] = "forward: KL(P_base || Q_candidate)"
        return d

    @classmethod
    def from_accumulator(cls, acc: LlamaKldAccumulator) -> LlamaKldStats:
        n = acc.count
        kv = np.sort(np.concatenate(acc.kld_values)) if acc.kld_values else np.zeros(0, F32)
        dv = np.sort(np.concatenate(acc.p_diff_values)) if acc.p_diff_values else np.zeros(0, F32)
        lp, lp_se = mean_and_uncertainty(acc.sum_nll, acc.sum_nll2, n)
        lb, lb_se = mean_and_uncertainty(acc.sum_nll_base, acc.sum_nll_base2, n)
        ppl, ppl_b = math.exp(lp), math.exp(lb)
        cov = covariance(acc.sum_nll, acc.sum_nll_base, acc.sum_nll_nll_base, n)
        ratio_unc = _sqrt(lp_se * lp_se + lb_se * lb_se - 2.0 * cov)
        ratio = math.exp(lp - lb)
        ppl_unc, ppl_b_unc = ppl * lp_se, ppl_b * lb_se
        kl, kl_se = mean_and_uncertainty(acc.sum_kld, acc.sum_kld2, n)
        dp, dp_se = mean_and_uncertainty(acc.sum_p_diff, acc.sum_p_diff2, n)
        mse, mse_se = mean_and_uncertainty(acc.sum_p_diff2, acc.sum_p_diff4, n)
        rms = math.sqrt(mse)
        top = _div(acc.n_same_top, n)
        have = len(kv) > 0
        return cls(
            n_tokens=n,
            ppl_q=ppl,
            ppl_q_unc=ppl_unc,
            ppl_base=ppl_b,
            ppl_base_unc=ppl_b_unc,
            cor_ln_ppl=_div(cov, lp_se * lb_se),
            ln_ppl_ratio=lp - lb,
            ln_ppl_ratio_unc=ratio_unc,
            ppl_ratio=ratio,
            ppl_ratio_unc=ratio * ratio_unc,
            ppl_diff=ppl - ppl_b,
            ppl_diff_unc=_sqrt(ppl_unc * ppl_unc + ppl_b_unc * ppl_b_unc - 2.0 * (ppl * ppl_b * cov)),
            kld_mean=kl,
            kld_se=kl_se,
            kld_max=float(kv[-1]) if have else math.nan,
            kld_min=float(kv[0]) if have else math.nan,
            kld_median=float(median(kv)) if have else math.nan,
            kld_percentiles={_pct_key(f): float(percentile(kv, f)) for f in KLD_PERCENTILES} if have else {},
            dp_mean=dp,
            dp_se=dp_se,
            dp_max=float(dv[-1]) if have else math.nan,
            dp_min=float(dv[0]) if have else math.nan,
            dp_median=float(median(dv)) if have else math.nan,
            dp_percentiles={_pct_key(f): float(percentile(dv, f)) for f in DP_PERCENTILES} if have else {},
            rms_dp=rms,
            rms_dp_unc=_div(0.5, rms) * mse_se,
            same_top=top,
            same_top_unc=_sqrt(_div(top * (1.0 - top), n - 1)),
            chunk_lines=list(acc.chunk_lines),
        )


def nan_to_none(x):
    if isinstance(x, dict):
        return {k: nan_to_none(v) for k, v in x.items()}
    if isinstance(x, list):
        return [nan_to_none(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _kld_label(key: str) -> str:
    return f"{float(key):4.1f}%   KLD:"


def _dp_label(key: str) -> str:
    return f"{float(key):4.1f}%   Δp:"


def format_report(stats: LlamaKldStats, *, chunks: bool = True, repeat_chunk_header: bool = False) -> str:
    """The text llama-perplexity ``--kl-divergence`` prints on stdout: the cumulative per-chunk lines
    (the column header once, after a blank line, as the vendored build prints it; builds around
    commit 050fc7f3 repeat it before every chunk — ``repeat_chunk_header=True``; the timing line is
    not reproduced), a blank line, then — only when N ≥ 100 — the
    three final blocks with llama.cpp's labels, widths and precisions. No kldcard preface: callers that
    print this must say what the numbers are (KL(P_base ‖ Q), nats, positions) around it."""
    out: list[str] = []
    if chunks:
        for i, line in enumerate(stats.chunk_lines):
            if repeat_chunk_header or i == 0:
                out += ["", CHUNK_HEADER]
            out.append(line)
    out.append("")
    if not stats.has_final_blocks:
        return "\n".join(out) + "\n"
    s = stats
    out += [
        "====== Perplexity statistics ======",
        f"Mean PPL(Q)                   : {_c(s.ppl_q, '10.6')} ± {_c(s.ppl_q_unc, '10.6')}",
        f"Mean PPL(base)                : {_c(s.ppl_base, '10.6')} ± {_c(s.ppl_base_unc, '10.6')}",
        f"Cor(ln(PPL(Q)), ln(PPL(base))): {_c(100.0 * s.cor_ln_ppl, '6.2')}%",
        f"Mean ln(PPL(Q)/PPL(base))     : {_c(s.ln_ppl_ratio, '10.6')} ± {_c(s.ln_ppl_ratio_unc, '10.6')}",
        f"Mean PPL(Q)/PPL(base)         : {_c(s.ppl_ratio, '10.6')} ± {_c(s.ppl_ratio_unc, '10.6')}",
        f"Mean PPL(Q)-PPL(base)         : {_c(s.ppl_diff, '10.6')} ± {_c(s.ppl_diff_unc, '10.6')}",
        "",
        "====== KL divergence statistics ======",
        f"Mean    KLD: {_c(s.kld_mean, '10.6')} ± {_c(s.kld_se, '10.6')}",
        f"Maximum KLD: {_c(s.kld_max, '10.6')}",
    ]
    kp = s.kld_percentiles
    out += [f"{_kld_label(k)} {_c(kp[k], '10.6')}" for k in ("99.9", "99.0", "95.0", "90.0")]
    out.append(f"Median  KLD: {_c(s.kld_median, '10.6')}")
    out += [f"{_kld_label(k)} {_c(kp[k], '10.6')}" for k in ("10.0", "5.0", "1.0", "0.1")]
    out += [
        f"Minimum KLD: {_c(s.kld_min, '10.6')}",
        "",
        "====== Token probability statistics ======",
        f"Mean    Δp: {_c(100.0 * s.dp_mean, '6.3')} ± {_c(100.0 * s.dp_se, '5.3')} %",
        f"Maximum Δp: {_c(100.0 * s.dp_max, '6.3')}%",
    ]
    dpp = s.dp_percentiles
    out += [f"{_dp_label(k)} {_c(100.0 * dpp[k], '6.3')}%" for k in ("99.9", "99.0", "95.0", "90.0", "75.0")]
    out.append(f"Median  Δp: {_c(100.0 * s.dp_median, '6.3')}%")
    out += [f"{_dp_label(k)} {_c(100.0 * dpp[k], '6.3')}%" for k in ("25.0", "10.0", "5.0", "1.0", "0.1")]
    out += [
        f"Minimum Δp: {_c(100.0 * s.dp_min, '6.3')}%",
        f"RMS Δp    : {_c(100.0 * s.rms_dp, '6.3')} ± {_c(100.0 * s.rms_dp_unc, '5.3')} %",
        f"Same top p: {_c(100.0 * s.same_top, '6.3')} ± {_c(100.0 * s.same_top_unc, '5.3')} %",
    ]
    return "\n".join(out) + "\n"
