"""Parse a pasted ``llama-perplexity --kl-divergence`` output block into structured values.

Accepts the current format (≥ PR #16321: 95%/0.1% KLD percentiles), the pre-#16321 format (no
95%/0.1% KLD lines; builds before PR #15999 print the "99.0%   KLD" line twice — kept once, noted),
and the January-2024 format of PR #5081 (``===== KL-divergence statistics``, ``Average:``,
``KLD_99 :``). Lines may carry prefixes (timestamps, log levels, indentation, Markdown quoting);
labels are matched anywhere in a line. ``±`` may appear as ``+/-`` and ``Δ`` as mojibake.

The protocol implies disclosures a card can pre-fill (:meth:`LlamaLog.implied_disclosures`):
direction forward, KL(P_base ‖ Q_candidate), nats; positions n_ctx//2 … n_ctx−2 of each
non-overlapping n_ctx chunk (scheme ``llama-perplexity``); full vocabulary stored at a 16-nat floor
(24 for ik_llama.cpp ≥ PR #325 — the log cannot tell; pass ``floor_nats``); token mean ± i.i.d. SE.
Percent values in the log are converted to fractions (Δp, RMS Δp, Same top p, correlation).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from kldcard.errors import InputError

_NUM = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|-nan|inf|-inf))"
_PM = r"\s*(?:±|\+/-|Â±|\+-)\s*"
_DP = r"(?:Δ|Î”|\u0394)p"

# (key, regex); values in percent are divided by 100 later (see _PERCENT_KEYS).
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (key, re.compile(rx))
    for key, rx in [
        ("ppl_q", rf"Mean PPL\(Q\)\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("ppl_base", rf"Mean PPL\(base\)\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("cor_ln_ppl", rf"Cor\(ln\(PPL\(Q\)\), ln\(PPL\(base\)\)\)\s*:\s*{_NUM}\s*%"),
        ("ln_ppl_ratio", rf"Mean ln\(PPL\(Q\)/PPL\(base\)\)\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("ppl_ratio", rf"Mean PPL\(Q\)/PPL\(base\)\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("ppl_diff", rf"Mean PPL\(Q\)-PPL\(base\)\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("kld_mean", rf"Mean\s+KLD\s*:\s*{_NUM}{_PM}{_NUM}"),
        ("kld_max", rf"Maximum KLD\s*:\s*{_NUM}"),
        ("kld_min", rf"Minimum KLD\s*:\s*{_NUM}"),
        ("kld_median", rf"Median\s+KLD\s*:\s*{_NUM}"),
        ("kld_pct", rf"(\d+(?:\.\d+)?)%\s+KLD\s*:\s*{_NUM}"),
        ("dp_mean", rf"Mean\s+{_DP}\s*:\s*{_NUM}{_PM}{_NUM}\s*%"),
        ("dp_max", rf"Maximum {_DP}\s*:\s*{_NUM}\s*%"),
        ("dp_min", rf"Minimum {_DP}\s*:\s*{_NUM}\s*%"),
        ("dp_median", rf"Median\s+{_DP}\s*:\s*{_NUM}\s*%"),
        ("dp_pct", rf"(\d+(?:\.\d+)?)%\s+{_DP}\s*:\s*{_NUM}\s*%"),
        ("rms_dp", rf"RMS {_DP}\s*:\s*{_NUM}{_PM}{_NUM}\s*%"),
        ("same_top", rf"Same top p\s*:\s*{_NUM}{_PM}{_NUM}\s*%"),
        # PR #5081 (January 2024) format
        ("kld_mean", rf"^\s*Average\s*:\s*{_NUM}{_PM}{_NUM}\s*$"),
        ("kld_median", rf"^\s*Median\s*:\s*{_NUM}\s*$"),
        ("kld_max", rf"^\s*Maximum\s*:\s*{_NUM}\s*$"),
        ("kld_min", rf"^\s*Minimum\s*:\s*{_NUM}\s*$"),
        ("kld_pct_old", rf"KLD_(\d\d)\s*:\s*{_NUM}"),
    ]
]
_PERCENT_KEYS = {"cor_ln_ppl", "dp_mean", "dp_max", "dp_min", "dp_median", "dp_pct", "rms_dp", "same_top"}
# Per-chunk cumulative line (current): chunk, PPL ±, ln ratio ±, KLD ±, Δp RMS ± %, Same top ± %.
_CHUNK = re.compile(
    rf"^\s*(\d+)\s+{_NUM}{_PM}{_NUM}\s+{_NUM}{_PM}{_NUM}\s+{_NUM}{_PM}{_NUM}\s+{_NUM}{_PM}{_NUM}\s*%\s+{_NUM}{_PM}{_NUM}\s*%\s*$"
)
# PR #5081 per-chunk line: chunk, PPL, ln ratio ±, KLD ±, Same top ± (fraction).
_CHUNK_OLD = re.compile(rf"^\s*(\d+)\s+{_NUM}\s+{_NUM}{_PM}{_NUM}\s+{_NUM}{_PM}{_NUM}\s+{_NUM}{_PM}{_NUM}\s*$")
# the log's own line: "calculating perplexity over 8 chunks, n_ctx=512" (perplexity mode), "kl_divergence: computing over
# 8 chunks, n_ctx=512" (KL mode; llama-imatrix's "compute_imatrix: computing over ..." is its calibration run's)
_N_CTX = re.compile(r"(?:calculating perplexity|kl_divergence: computing) over (\d+) chunks, n_ctx=(\d+)")
# (and the progress line the first row may be glued to: the tool prints "kl_divergence: 4.10 seconds per pass - ETA"
# as an info log line without its newline and the rows on its output stream, so a log of both streams can join them)
_LOG_PREFIX = re.compile(
    r"^(?:\s*>\s?)*(?:\d+\.\d+\.\d+\.\d+\s+[IWE]\s+)?"
    r"(?:[a-z_]{1,30}:[ \t]+\d+\.\d+[ \t]+seconds per pass - ETA(?:[ \t]+\d+[ \t]+hours)?(?:[ \t]+\d+\.\d+[ \t]+minutes)?(?=[ \t]+\d+[ \t]))?"
)


def _f(s: str, percent: bool = False) -> float:
    """Parse a printed number; ``percent`` shifts the decimal point exactly (no 0.9981000000000001)."""
    s = s.replace("-nan", "nan")
    if percent and s.lower() not in ("nan", "inf", "-inf", "+inf"):
        return float(Decimal(s).scaleb(-2))
    return float(s)


@dataclass
class LlamaLog:
    """Structured values of one llama-perplexity KLD output. KLD in nats (KL(P_base ‖ Q)); Δp, RMS Δp,
    Same top p and the correlation as fractions (the log prints percent). ``None`` = not in the log."""

    format: str  # "current", "pre-16321", "pr-5081"
    values: dict[str, float] = field(default_factory=dict)  # e.g. ppl_q, ppl_q_unc, kld_mean, kld_se …
    kld_percentiles: dict[str, float] = field(default_factory=dict)  # "99.9" -> nats
    dp_percentiles: dict[str, float] = field(default_factory=dict)  # "99.9" -> fraction
    chunks: list[dict[str, float]] = field(default_factory=list)
    n_ctx: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_chunks(self) -> int | None:
        return int(self.chunks[-1]["chunk"]) if self.chunks else None

    @property
    def n_scored(self) -> int | None:
        if self.n_ctx is None or self.n_chunks is None:
            return None
        return self.n_chunks * (self.n_ctx - 1 - self.n_ctx // 2)

    def to_dict(self) -> dict:
        """JSON-ready (NaN, e.g. a printed "-nan", becomes None)."""
        from kldcard.llamacpp.stats import nan_to_none

        d = nan_to_none(asdict(self))
        d.update(n_chunks=self.n_chunks, n_scored=self.n_scored)
        d["units"] = {"kld": "nats", "dp": "fraction", "same_top": "fraction", "cor_ln_ppl": "fraction"}
        d["direction"] = "forward: KL(P_base || Q_candidate)"
        return d

    def results(self) -> dict:
        """A ``kldcard.schema.Results``-shaped dict (validate it when ``n_positions`` is known)."""
        from kldcard.llamacpp.stats import nan_to_none

        v = self.values
        pcts = dict(self.kld_percentiles)
        return nan_to_none({
            "n_positions": self.n_scored,
            "kld": {
                "mean": v.get("kld_mean"),
                "se": v.get("kld_se"),
                "median": v.get("kld_median"),
                "percentiles": pcts,
                "min": v.get("kld_min"),
                "max": v.get("kld_max"),
            },
            "top1_agreement": v.get("same_top"),
            "top1_agreement_se": v.get("same_top_unc"),
            "rms_delta_p": v.get("rms_dp"),
        })

    def implied_disclosures(self, *, floor_nats: float = 16.0) -> dict:
        """Partial ``kld_evaluation`` fields that the llama-perplexity protocol fixes. Fields the log
        cannot know (model, text, runtime, vocab sizes, BOS) are left out; ``n_ctx``-dependent ones
        are ``None`` unless the log or the caller gave ``n_ctx``."""
        pcts = sorted((float(k) for k in self.kld_percentiles), reverse=True)
        return {
            "context": {"n_ctx": self.n_ctx, "n_chunks": self.n_chunks, "stride": self.n_ctx},
            "positions": {"scheme": "llama-perplexity", "n_scored": self.n_scored},
            "direction": {"reported": ["forward"], "log_base": "e"},
            "vocabulary": {"truncation": "floor", "floor_nats": floor_nats, "alignment": "identical"},
            "aggregation": {
                "statistic": "token-mean",
                "percentiles": pcts,
                "output_ranges": [],
                "uncertainty": {"method": "se-iid"},
            },
        }


def parse_llama_log(text: str, *, n_ctx: int | None = None) -> LlamaLog:
    """Parse llama-perplexity ``--kl-divergence`` output; raise :class:`InputError` if it holds no
    KLD statistics. ``n_ctx`` (the ``-c`` of the base pass) overrides what the log says."""
    log = LlamaLog(format="current")
    seen_kld_pct: dict[str, float] = {}
    found_any = False
    old_format = False
    for raw_line in text.splitlines():
        line = _LOG_PREFIX.sub("", raw_line.rstrip())
        m = _N_CTX.search(line)
        if m:
            log.n_ctx = int(m.group(2))
        m = _CHUNK.match(line)
        if m:
            g = [_f(x, percent=i >= 6) for i, x in enumerate(m.groups()[1:])]
            log.chunks.append(
                dict(chunk=int(m.group(1)), ppl_q=g[0], ppl_q_unc=g[1], ln_ppl_ratio=g[2], ln_ppl_ratio_unc=g[3],
                     kld_mean=g[4], kld_se=g[5], rms_dp=g[6], rms_dp_unc=g[7], same_top=g[8], same_top_unc=g[9])
            )
            continue
        m = _CHUNK_OLD.match(line)
        if m:
            g = [_f(x) for x in m.groups()[1:]]
            log.chunks.append(
                dict(chunk=int(m.group(1)), ppl_q=g[0], ln_ppl_ratio=g[1], ln_ppl_ratio_unc=g[2],
                     kld_mean=g[3], kld_se=g[4], same_top=g[5], same_top_unc=g[6])
            )
            continue
        if "KL-divergence statistics" in line:
            old_format = True
        for key, rx in _PATTERNS:
            m = rx.search(line)
            if not m:
                continue
            if key in ("kld_mean", "kld_median", "kld_max", "kld_min") and rx.pattern.startswith("^") and not old_format:
                continue
            found_any = True
            g = m.groups()
            pc = key in _PERCENT_KEYS
            if key == "kld_pct":
                label = f"{float(g[0]):.1f}"
                if label in seen_kld_pct:
                    same = "" if seen_kld_pct[label] == _f(g[1]) else " (with a different value)"
                    log.notes.append(
                        f"duplicate '{label}% KLD' line{same}: builds before llama.cpp PR #15999 print the 99th "
                        "percentile twice; kept the first"
                    )
                    break
                seen_kld_pct[label] = _f(g[1])
            elif key == "kld_pct_old":
                seen_kld_pct[f"{float(g[0]):.1f}"] = _f(g[1])
            elif key == "dp_pct":
                log.dp_percentiles[f"{float(g[0]):.1f}"] = _f(g[1], pc)
            elif len(g) == 2:
                log.values[key] = _f(g[0], pc)
                log.values[_unc_key(key)] = _f(g[1], pc)
            else:
                log.values[key] = _f(g[0], pc)
            break
    if not found_any:
        raise InputError("no llama-perplexity KL-divergence statistics found in the log")
    log.kld_percentiles = seen_kld_pct
    if old_format:
        log.format = "pr-5081"
    elif "95.0" in seen_kld_pct or "0.1" in seen_kld_pct:
        log.format = "current"
    else:
        log.format = "pre-16321"
        log.notes.append("pre-#16321 log: no 95% / 0.1% KLD percentiles")
    if n_ctx is not None:
        log.n_ctx = n_ctx
    if log.n_ctx is None:
        log.notes.append("n_ctx is not in the log; pass --n-ctx to fill positions.n_scored and context")
    if not log.chunks:
        log.notes.append("no per-chunk lines; n_chunks unknown")
    return log


def _unc_key(key: str) -> str:
    return {"kld_mean": "kld_se", "dp_mean": "dp_se"}.get(key, f"{key}_unc")
