"""The disclosure schema: pydantic v2 models, the single source of truth.

A card's ``kld_evaluation:`` front-matter block validates against :class:`KldEvaluation`. The nine
disclosures (see DESIGN.md) map to fields as follows (the numbers are the KLD1xx rule codes):

====  ========================  =====================================================
code  disclosure                where
====  ========================  =====================================================
101   reference checkpoint      ``reference`` (model, revision/sha256, dtype)
102   runtime environment       ``reference.runtime`` and ``candidates[].runtime``
103   evaluation text           ``evaluation_text``
104   calibration data          ``candidates[].calibration``
105   context lengths           ``context``
106   sampled positions         ``positions``
107   KL direction              ``direction``
108   vocabulary truncation     ``vocabulary``
109   aggregation               ``aggregation``
====  ========================  =====================================================

"Complete" is encoded as *required*: a block that validates is fully disclosed, and every
validation error maps to exactly one disclosure (see :func:`disclosure_for_loc`). The models are
strict (a YAML 1.1 string such as ``1e-3`` is not silently accepted as a number) and forbid unknown
keys so that typos surface. Numbers are in nats; KL(P_ref ‖ P_cand) is "forward".

The JSON Schemas in ``schemas/`` are generated from these models (``python scripts/generate.py``).

The models are split by what they describe: :mod:`~kldcard.schema.base` (field types and the model
bases), :mod:`~kldcard.schema.disclosures` (the nine disclosures), :mod:`~kldcard.schema.results`
(per-candidate numbers), :mod:`~kldcard.schema.candidates` (candidates and their paired comparison)
and :mod:`~kldcard.schema.block` (the whole block); every name imports from ``kldcard.schema``.
May import :mod:`kldcard.schema_rules` and pydantic, nothing else of kldcard's.
"""

from __future__ import annotations

from kldcard import schema_rules  # noqa: F401  (re-exported: kldcard.schema.schema_rules as before)
from kldcard.schema.base import (  # noqa: F401  (re-exported: the schema's public names)
    ClosedModel,
    Dtype,
    GitRevision,
    Nats,
    NonNegInt,
    OpenModel,
    PosInt,
    RecordModel,
    Sha256,
)
from kldcard.schema.block import KldEvaluation, Sidecar  # noqa: F401
from kldcard.schema.candidates import (  # noqa: F401
    Candidate,
    CandidateModel,
    Comparison,
    ControlExcess,
    CrossStack,
    ModelSize,
    PairedDifference,
    RankEntry,
    TensorTypes,
)
from kldcard.schema.disclosures import (  # noqa: F401
    Aggregation,
    BlockDefinition,
    Calibration,
    Context,
    DatasetSource,
    Direction,
    DirectionDisclosure,
    EvaluationText,
    Positions,
    Reference,
    RepoFileSource,
    StackFingerprint,
    TokenizerParity,
    Uncertainty,
    UrlSource,
    Vocabulary,
)
from kldcard.schema.results import (  # noqa: F401
    ConfidenceBucket,
    DepthOnset,
    DepthProfile,
    DivergenceCluster,
    RangeDifference,
    RangeResult,
    Results,
    Summary,
    TopK,
)
from kldcard.schema_rules import (  # noqa: F401  (re-exported: the schema's public names)
    BLOCK_METHODS,
    DISCLOSURES,
    SCHEMA_VERSION,
    UNQUANTIZED_DTYPES,
    disclosure_for_loc,
    expand_runtime_changes,
    is_quantized_dtype,
)
