"""The reading of a free-form card: per KLD claim, one reading per disclosure, with its evidence.

This module holds only the data types (the contract between the prose reader, the linter's verdicts,
``--explain``, the scaffold and ``kldcard comparable``). The reader that fills them lives beside it.

A reading says, for one claim and one disclosure (D1–D9, numbered as in the schema):

- ``status``: ``stated`` (what the schema calls complete was found), ``incomplete`` (something was
  found, but not all that "complete" means: a reference without revision or dtype, an engine without
  version, a text without source), ``inferred`` (from a named tool's documented defaults; only when
  the card names or unmistakably prints that tool) or ``missing`` (nothing was found);
- ``value``: the normalised value read, under the keys of :data:`VALUE_KEYS` (absent keys: not read);
- ``evidence``: where it was read (line and column of the quoted span in the card file, or the
  front-matter key), so that a reviewer can check every verdict;
- ``needs``: for ``incomplete`` and ``missing``, what is still needed, in words.

Values are plain JSON types, so a reading serialises as it is (:meth:`ClaimReading.to_json`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# the nine disclosures' names, as findings say them ("does not state the reference checkpoint")
NAMES = {
    1: "reference checkpoint",
    2: "runtime environment",
    3: "evaluation text",
    4: "calibration data",
    5: "context length",
    6: "sampled positions",
    7: "KL direction",
    8: "vocabulary truncation",
    9: "aggregation",
}

Status = Literal["stated", "incomplete", "inferred", "missing"]
STATUSES: tuple[Status, ...] = ("stated", "incomplete", "inferred", "missing")

DISCLOSURES = NAMES  # one table: the names a reading and a finding give the nine disclosures

# The normalised value of each disclosure: the keys a reader may fill (all optional). Strings are as
# the card writes them unless said otherwise; numbers are ints.
VALUE_KEYS: dict[int, tuple[str, ...]] = {
    # repo: "org/name" or a file name; dtype: "BF16" | "F16" | "F32" | "Q8_0" | ... (upper case);
    # revision: a commit or sha256; quantized: the reference is itself quantized
    1: ("repo", "revision", "dtype", "quantized"),
    # engine: canonical name ("llama.cpp", "ik_llama.cpp", "exllamav3", "transformers", "vllm",
    # "sglang", "mlx", ...); version: build or tag; backend: "CUDA", "Metal", "CPU", ...; device: hardware
    2: ("engine", "version", "backend", "device"),
    # name: "wikitext-2" | "wiki.test.raw" | ...; source: dataset id / URL; tokens: token count
    3: ("name", "source", "sha256", "tokens", "chat_template"),
    # none: True when the card says no calibration was used; dataset; size (as written); overlaps
    4: ("none", "dataset", "size", "overlaps"),
    # n_ctx: tokens per window; chunks: number of windows; stride
    5: ("n_ctx", "chunks", "stride"),
    # scheme: "all" | "second-half" | "every:N" | "list" | ...; count: positions scored
    6: ("scheme", "count"),
    # direction: "forward" (KL(P_ref ‖ P_cand)) | "reverse" | "js" | "symmetric" | "both" (both printed
    # side by side) | "as-written" (a formula whose sides the reader cannot tell); unit: "nats" | "bits"
    7: ("direction", "unit"),
    # scheme: "full" | "top-k" | "floor" | "sampled-token" (a per-token log-ratio: only the sampled token's
    # probability, read.vocabulary); k; floor (nats)
    8: ("scheme", "k", "floor"),
    # statistic: "mean" | "median" | "max" | "min" | "cvar" (a worst tail's mean) | "p99" | "p99.9" | ... (the claim's numbers; several
    # joined by "+"; "labelled" when the claim's label names one the reader does not know);
    # uncertainty: method as written
    9: ("statistic", "uncertainty"),
}


@dataclass(frozen=True)
class Evidence:
    """Where a reading comes from: a quoted span of the card file, or a front-matter key.

    ``line``/``column`` are 1-based positions in the card file (front matter counted); ``key`` is a
    JSON pointer into the front matter (``/base_model``) when the evidence is metadata; ``tool`` names
    the tool whose documented defaults an ``inferred`` reading comes from.
    """

    text: str
    line: int | None = None
    column: int | None = None
    key: str | None = None
    tool: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        for name in ("line", "column", "key", "tool"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


@dataclass(frozen=True)
class DisclosureReading:
    disclosure: int  # 1..9
    status: Status
    value: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    needs: tuple[str, ...] = ()  # what "complete" still lacks (incomplete / missing)
    # the keys of ``value`` that the named tool's documented default gives, not the card: all of an ``inferred``
    # reading's; in a stated or incomplete one, what the tool fixes beside the card's part (tool_defaults.fixed_by_tool)
    inferred_keys: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return DISCLOSURES[self.disclosure]

    @property
    def said(self) -> dict[str, Any]:
        """The values the card itself gives: ``value`` less what its tool's default gives (``inferred_keys``)."""
        return {k: x for k, x in self.value.items() if k not in self.inferred_keys}

    def to_json(self) -> dict[str, Any]:
        return {
            "disclosure": f"D{self.disclosure}",
            "name": self.name,
            "status": self.status,
            "value": dict(self.value),
            "evidence": [e.to_json() for e in self.evidence],
            "needs": list(self.needs),
            **({"inferred_keys": list(self.inferred_keys)} if self.inferred_keys else {}),
        }


@dataclass(frozen=True)
class NumberReading:
    """One KLD number of a claim, as read: ``value`` in the card's unit (``unit``: "nats", "bits",
    "percent" or None when unstated), the statistic it is labelled with (as in VALUE_KEYS[9], plus
    "se" after a "±" and "ci_low"/"ci_high" inside "[a, b]"), and the candidate it belongs to (a table
    row's label, e.g. "Q4_K_M") when the claim says."""

    text: str
    value: float
    line: int
    column: int
    unit: str | None = None
    statistic: str | None = None
    candidate: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class ClaimReading:
    """One KLD claim (a table, a pasted tool output, or a sentence) and its nine readings."""

    kind: str  # "table" | "tool-output" | "sentence"
    line: int
    column: int
    text: str
    numbers: tuple[NumberReading, ...]
    disclosures: dict[int, DisclosureReading]
    tool: str | None = None  # the tool whose output or label set the claim is, when recognised

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "line": self.line,
            "column": self.column,
            "text": self.text,
            "tool": self.tool,
            "numbers": [n.to_json() for n in self.numbers],
            "disclosures": [self.disclosures[n].to_json() for n in sorted(self.disclosures)],
        }
