"""The section's sentences about candidates measured differently from the reference on purpose:
on another stack (``cross_stack``) or over their own top-k vocabulary (a served candidate)."""

from __future__ import annotations

from kldcard.schema import Candidate, StackFingerprint

__all__ = ["on_purpose_text", "own_vocabulary_text"]


def own_vocabulary_text(c: Candidate) -> str:
    """A served candidate's own vocabulary treatment, and what its KLD then is."""
    v = c.vocabulary
    assert v is not None
    bound = ("a lower bound on the full-vocabulary KL" if v.tail == "lumped"
             else "neither a lower nor an upper bound on the full-vocabulary KL")
    return (f"its KLD is computed from the top-{v.top_k} log-probabilities it reported (tail {v.tail}): {bound}, "
            "not comparable with the full-vocabulary numbers; no reverse KL or JS")


def on_purpose_text(c: Candidate, ref: StackFingerprint, unranked: bool = False) -> str:
    """The reader's sentence for a candidate measured across stacks on purpose (its ``cross_stack``);
    ``unranked``: the card's paired ranking leaves it out."""
    ack = c.cross_stack
    assert ack is not None
    where = (f"on {c.runtime.engine} against a {ref.engine} reference" if c.runtime.engine != ref.engine
             else "on another stack than the reference")
    values = [f"{k} {getattr(ref, k)} vs {getattr(c.runtime, k)}" if k in StackFingerprint.model_fields else k
              for k in ack.coordinates]
    return (f"{c.name} was measured {where}, on purpose ({ack.reason}; {', '.join(values)}): its KLD includes "
            "the stack difference as well as the quantization, so it is not a measure of the quantization alone"
            + (", and it is left out of the paired ranking" if unranked else ""))
