"""KLD009–KLD010: the linter's own directives (inline suppressions in Markdown and front-matter comments).

Importing this module registers the rules. Like ruff's unused-noqa (RUF100), a suppression that
suppresses nothing is reported, so that stale directives do not pile up and hide future findings.
"""

from __future__ import annotations

from kldcard.lint.rule import RuleSet

RULES = RuleSet()
rule = RULES.rule

UNUSED_SUPPRESSION = rule(
    code="KLD009",
    name="unused-suppression",
    severity="warning",
    summary="a suppression directive suppresses no finding",
    what="Flags a `<!-- kldcard-disable... -->` directive or a `# kldcard: ignore` front-matter comment "
    "(or one of its codes) that suppressed no finding in this run. Codes that the run does not check "
    "(deselected with `--select`/`--ignore`) are not reported.",
    why="A suppression outlives the finding it was written for: once the claim is fixed or removed, the "
    "directive silently hides the next, unrelated finding of that rule on the same line or range.",
    example="<!-- kldcard-disable-next-line KLD303 -- quoted from the upstream card -->\n"
    "Our quantization scores well on every benchmark we ran.\n",
    fix="Our quantization scores well on every benchmark we ran.\n",
)

INVALID_SUPPRESSION = rule(
    code="KLD010",
    name="invalid-suppression",
    severity="error",
    summary="a suppression directive is malformed or names an unknown rule",
    what="Flags a comment that starts like a kldcard directive (`<!-- kldcard-disable`, `<!-- kldcard-enable`, "
    "`# kldcard: ignore`) but is not one of `kldcard-disable-next-line`, `kldcard-disable-line`, "
    "`kldcard-disable`, `kldcard-enable`, `kldcard-disable-file`, `kldcard: ignore`, or that names a code "
    "or prefix no rule has.",
    why="A misspelled directive suppresses nothing, so the author believes a finding is accepted while CI "
    "keeps failing (or, worse, a typo in the code accepts a different rule than intended).",
    example="<!-- kldcard-disable-nextline KLD33 -->\nMean KLD 0.012 (quoted from the upstream card).\n",
    fix="<!-- kldcard-disable-next-line KLD303 -- quoted from the upstream card -->\n"
    "Mean KLD 0.012 (quoted from the upstream card).\n",
)
