"""llama.cpp's KLD protocol: ``--kl-divergence-base`` files, llama-perplexity's statistics, its logs.

- :mod:`.basefile` reads/writes ``_logits_`` base files (memory-mapped; float32-exact encoding).
- :mod:`.stats` reproduces llama-perplexity's statistics and printed block (float32 formulas).
- :mod:`kldcard.capture.llama_perplexity` (in capture, which runs it) is llama-perplexity's evaluation plan.
- :mod:`.convert` turns base files into kldcard captures and back.
- :mod:`.log` parses pasted llama-perplexity output into structured values and implied disclosures.
- :mod:`.libm` is llama.cpp's float arithmetic as glibc does it (``expf``, ``log``, in-order sums).
- :mod:`.floor` measures the base-file format's own noise floor on given logits.

KLD in llama.cpp is KL(P_base ‖ Q_candidate) — forward — in nats, at positions n_ctx//2 … n_ctx−2 of
every non-overlapping n_ctx chunk, with the base stored at a 16-nat floor (24 in ik_llama.cpp).

Owns llama.cpp's formats and printed statistics. May import: errors, files, schema, capture, compare.
Never render, lint or cli.
"""

from kldcard.capture.llama_perplexity import LlamaPerplexityPlan, llama_perplexity_plan
from kldcard.llamacpp.basefile import (
    BaseFile,
    BaseFileHeader,
    BaseFileWriter,
    decode_codes,
    encode_records,
    expected_size,
    open_base_file,
    write_base_file,
)
from kldcard.llamacpp.convert import (
    base_to_capture,
    capture_to_base,
    compare_base_with_capture,
)
from kldcard.llamacpp.floor import FormatFloor, measure_format_floor
from kldcard.llamacpp.log import LlamaLog, parse_llama_log
from kldcard.llamacpp.stats import (
    LlamaKldAccumulator,
    LlamaKldStats,
    format_report,
    per_token,
)

__all__ = [
    "BaseFile",
    "BaseFileHeader",
    "BaseFileWriter",
    "FormatFloor",
    "LlamaKldAccumulator",
    "LlamaLog",
    "LlamaKldStats",
    "LlamaPerplexityPlan",
    "base_to_capture",
    "capture_to_base",
    "compare_base_with_capture",
    "decode_codes",
    "encode_records",
    "expected_size",
    "format_report",
    "llama_perplexity_plan",
    "measure_format_floor",
    "open_base_file",
    "parse_llama_log",
    "per_token",
    "write_base_file",
]
