"""The verbs of a measurement's run, as cards write them before the engine or the hardware it ran in or on
("ran forward passes in exllamav3", "measured with llama.cpp", "evaluated on one H100"): one table for the
runtime's three readers, which had a copy each. Regular-expression text; a small data module so that
evidence_patterns, which read.runtime imports, can take it too.

The readers: ``ENGINE`` is evidence_patterns.D2's engine named alone ("measured with llama.cpp": the runtime,
incomplete); ``RAN_IN`` is read.runtime's lift of its background veto when a run's verb stands right before the
engine's name; ``ON_HARDWARE`` is read.runtime's MEASURED_ON ("measured on an RTX 4090"). Each reader keeps the
verbs it had: giving every reader all of them ("runs in exllamav3" as evidence of the engine, "ran on a DGX Spark"
as the hardware) moves D2 readings of five corpus texts: a change of behaviour for its own table, not part of
keeping one list."""

from __future__ import annotations

ENGINE, RAN_IN, ON_HARDWARE = "engine", "ran in", "on hardware"
_ALL = (ENGINE, RAN_IN, ON_HARDWARE)

# (verb as regular-expression text, the readers that take it)
RUN_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("measured", _ALL),
    ("computed", _ALL),
    ("evaluated", _ALL),
    ("scored", _ALL),
    ("ran", (ENGINE, RAN_IN)),
    ("runs?", (RAN_IN,)),
    ("forward[- ]pass(?:es)?", (RAN_IN,)),
    ("tested", (ON_HARDWARE,)),
    ("benchmarked", (ON_HARDWARE,)),
)


def run_verb(reader: str) -> str:
    """The verbs ``reader`` takes, as one non-capturing group of regular-expression text."""
    return r"(?:" + "|".join(verb for verb, readers in RUN_VERBS if reader in readers) + r")"
