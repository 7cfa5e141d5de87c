"""D4 (calibration) statements beyond a named calibration set (kldcard.lint.evidence_patterns.D4_WORD with a
dataset in its sentence): the ways cards say that a calibration was used, or name it by its file, without
naming its text. The reading reports them as ``incomplete`` ("name the calibration set"), or as stated when
the file and its size are given.

- a calibration or imatrix file named: ``NX2.imatrix``, ``imatrix_unsloth.gguf``, ``reap_recall_calib.jsonl``
  (not a file passed to the evaluation with ``-f``/``--file``);
- the quants described as calibrated: "imatrix-weighted experts", "+ Imatrix", "the matching imatrix",
  "the imatrix was built from data with more Japanese", "calibrated on similar prose", "Unsloth's imatrix
  calibration data", exllamav3's "calibration250×2048";
- a labelled field or table column: "**Calibration:**", "La calibración usó …", "| imatrix |";
- the train split of wikitext named in a sentence about training or calibration ("wiki.train 640 seq (学習)").

"Calibration" that modifies something other than data ("calibration targets", "calibration artifact") is no
calibration (:func:`not_data`, applied by kldcard.lint.evidence to the calibration word).

The caller (kldcard.lint.evidence) applies the D4 vetoes (hypothetical and negated sentences).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import calibration_data, calibration_statements, command_lines, eval_text

I = re.IGNORECASE

PATTERNS: list[re.Pattern[str]] = [
    # a calibration / imatrix file
    re.compile(
        r"(?<![\w.\-/])(?:[\w\-]+\.imatrix\b|[\w.\-]*imatrix[\w.\-]*\.(?:gguf|dat|bin)\w*|[\w.\-]*calib[\w.\-]*\.(?:jsonl?|txt|parquet|csv))",
        I,
    ),
    # quants described as made with an importance matrix / calibration
    re.compile(
        r"\bimatrix[- ](?:weighted|guided|aware|data)\b|\+\s*imatrix\b|\b(?:the\s+)?(?:matching|corresponding|same|own|"
        r"custom|their|its)\s+(?:importance matrix|imatrix)\b|\b(?:imatrix|importance matrix)\s+(?:was|were|is)\s+(?:built|computed|made|"
        r"created|generated|trained)\b|(?<![\w\-])calibrated\s+(?:on|with|using)\b|\bcalibration\s*\d+\s*[×x]\s*\d+|"
        r"\bimatrix\s+calibration\s+data\b|\bimatrixの作成|\bimatrix\s*(?:を|は)|"
        # the Spanish / Portuguese name of an importance matrix ("calibrated ... scales" names no data: not D4)
        r"\bmatriz\s+de\s+import[aâ]ncia\b",
        I,
    ),
    # a labelled field or a table column
    re.compile(r"(?:^|\s)\**calibra(?:tion|ción|ção|tion data|tion set)\**\s*[:：]|\bcalibraci[óo]n\s+us[óo]\b|^\|(?:[^|\n]*\|)*?\s*imatrix\s*\|", I | re.MULTILINE),
    # the train split of wikitext, named for training or calibration
    re.compile(r"(?<![\w\-/])wiki\.train(?:\.raw)?\b", I),
]
FILE_PATTERN, DESCRIBED, LABELLED, TRAIN_SPLIT = PATTERNS
PATTERNS += calibration_data.PATTERNS  # the data in other words and languages (kldcard.lint.read.calibration_data)
PATTERNS += calibration_statements.PATTERNS  # an imatrix by its maker, an explicit none, other languages' verbs
TRAINING = re.compile(r"\btrain(?:ing|ed)?\b|学習|训练|訓練|calibra|imatrix|importance", I)
EVAL_FILE = re.compile(r"(?:-f|--file)\s+\S*$")
# a link's text names a section or a document ("see [the calibration table](#...)"), not the calibration
LINK_OPEN, LINK_CLOSE = re.compile(r"\[[^\]\n]*$"), re.compile(r"^[^\[\n]*\]\(")


# "calibration" as a modifier of something that is no data: "Calibration targets taken from the published record",
# "Calibration artifact: raw wikitext gives a high PPL", "It feeds this calibration bar: turbo3 mean 0.0115 nats" (a
# target of tuning or its synonyms, a measuring artefact)
NOT_DATA = re.compile(
    r"[*_`]*\s+(?:targets?|bars?|thresholds?|artifacts?|artefacts?|errors?|curves?|plots?|bias|metrics?|checks?|drift|issues?|problems?|offsets?|gaps?)\b", I
)


# a field's label starts its line, list item, cell, parenthesis or sentence ("- **Calibration:** ...", "| Calibration:
# wiki |", "Q4_K_M. Calibration: ..."); after a word on its line ("Arm chosen by calibration:") it labels nothing
FIELD_AFTER_WORD = re.compile(r"[^\W\d_][ \t*_`]*$")


# a calibration still to be made: the object of a present or future need ("numbers need a model-suited, multi-slice
# calibration corpus before they ...", "32B needs a calibration of its own"): a plan's mood, no calibration used (plain
# grammar; the past "required 512 calibration samples" tells what was done and is kept)
REQUIRED = re.compile(r"\b(?:needs?|requires?|(?:will|would|should)\s+(?:need|require))\s+(?:an?|the|its|their|some|more)?\s*(?:[\w\-]+,?\s+){0,4}$", I)


def required(text: str, m: re.Match[str]) -> bool:
    """Whether the calibration word at ``m`` is what something still needs (a plan, not a calibration used)."""
    before = text[max(0, m.start() - 80) : m.start()]
    return REQUIRED.search(before[max(before.rfind("."), before.rfind("\n")) + 1 :]) is not None


def not_data(text: str, m: re.Match[str]) -> bool:
    """Whether the calibration word at ``m`` modifies a noun that is no calibration data ("calibration targets")."""
    return m.group(0).lower().startswith("calibration") and NOT_DATA.match(text, m.end()) is not None


# a word's dataset hint (kldcard.lint.evidence_patterns.DATASET_HINT) that names a model or a page, not data: a link
# or address that is not a dataset's nor a data file's (a model's Hub page, a repository's file), a Hub id with a
# model's size or format ("Qwen/Qwen3.5-2B", "unsloth/Qwen3.8-27B-GGUF"), the model after "quantizations of"
# ("imatrix Quantizations of zai-org/GLM-4.5"), a source file's path ("../lib/fetch.nix")
ADDRESS_END = re.compile(r"[\s)\]>`'\"|,]")
DATA_ADDRESS = re.compile(r"/datasets/|\.(?:txt|raw|parquet|jsonl?|csv|dat|gz)(?:$|[?#])", I)
MODEL_OF = re.compile(r"\b(?:quants?|quantizations?|quantisations?|GGUFs?|conversions?)\s+(?:of|for)\s+[`'\"]?$", I)
SOURCE_FILE = re.compile(r"\.(?:nix|py|sh|rs|cpp|cc|c|h|hpp|go|js|ts|toml|ya?ml|lock|cu|md)$", I)


def names_no_data(sentence: str, hint: re.Match[str]) -> bool:
    """Whether ``hint`` (a :data:`~kldcard.lint.evidence_patterns.DATASET_HINT` match in ``sentence``) names a model,
    a page or a source file rather than data."""
    start = hint.end() if hint.group(0) == "](" else hint.start()
    lo = max(sentence.rfind(c, 0, start) for c in " \t\n(<[`'\"") + 1
    end = ADDRESS_END.search(sentence, start)
    token = sentence[lo : end.start() if end else len(sentence)]
    if "://" in token or token.startswith(("www.", "huggingface.co", "hf.co", "github.com")):
        return not DATA_ADDRESS.search(token)
    if hint.group(0) == "](":  # a link to a section or a page of the same site
        return not DATA_ADDRESS.search(token)
    if "/" not in hint.group(0):
        return False
    return bool(eval_text.MODEL_ID.search(hint.group(0)) or MODEL_OF.search(sentence, 0, hint.start())
                or SOURCE_FILE.search(token))


def data_ids(around: str, ids: list[str]) -> list[str]:
    """The Hub ids of ``ids`` (found in ``around``) that can name calibration data: not a model's, by its size or format
    ("acme/Falcon-3B-Instruct") or as the model after "quantizations of" ("imatrix Quantizations of acme-lab/Orca")."""
    out = []
    for name in ids:
        at = around.find(name)
        if eval_text.MODEL_ID.search(name) or (at >= 0 and MODEL_OF.search(around, max(0, at - 40), at)):
            continue
        out.append(name)
    return out


# a sentence that ends inside emphasis ("**If it has to be 4-bit, take Q4_K_M.** Its perplexity ...") still ends there:
# the sentence splitter reads on past the closing "**" (Markdown emphasis, general)
EMPHASIS_END = re.compile(r"[.!?][*_`]+\s+")


def own_sentence(sentence: str, at: int) -> str:
    """The part of ``sentence`` from the last sentence end closed by emphasis before the match, which starts at
    offset ``at`` of it (the whole when none). The offset, not the match's text: a word the sentence repeats would
    cut at its first copy ("**If it has to be calibrated ....** Its files were calibrated on ...")."""
    cuts = [e.end() for e in EMPHASIS_END.finditer(sentence, 0, max(0, at))]
    return sentence[cuts[-1] :] if cuts else sentence


def in_link(text: str, m: re.Match[str]) -> bool:
    """Whether ``m`` stands inside a Markdown link's text."""
    return bool(LINK_OPEN.search(text, max(0, m.start() - 80), m.start()) and LINK_CLOSE.match(text[m.end() : m.end() + 120]))


def imatrix_command(text: str, at: int) -> bool:
    """Whether ``at`` stands in a ``llama-imatrix`` (or ``imatrix``) command, its lines joined by backslashes:
    the ``-f`` file there is the calibration text, not the evaluation's."""
    start = command_lines.span(text, at)[0]
    return bool(re.search(r"(?:^|[\s/])(?:llama-)?imatrix(?:\.exe)?\s", text[start:at]))


# a script's variable set to the file on the match's line ("CORPUS = os.path.join(BASE, \"calib.txt\")", "TEXT=$HOME/calib.txt")
ASSIGNED = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)[ \t]*=", re.MULTILINE)


def passed_by_name(text: str, m: re.Match[str]) -> bool:
    """Whether the file at ``m`` is assigned to a variable that is then given to an evaluation's ``-f`` ("-f",
    CORPUS / -f "$CORPUS"): passed by name, the file is the evaluation's text whatever its name says."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    a = ASSIGNED.match(text, line_start)
    if a is None or a.end() > m.start():
        return False
    var = re.escape(a.group(1))
    uses = re.finditer(rf"(?:-f|--file)['\"]?\s*,?\s*['\"]?\$?\{{?{var}\b", text)
    return any(not imatrix_command(text, u.start()) for u in uses)


def veto(sentence: str, m: re.Match[str], before: str, text: str) -> bool:
    """True when the match is not a statement of the candidates' calibration (``before``: the text right before
    it; ``text``: the whole body)."""
    if m.re is FILE_PATTERN.compiled:  # a calibration text passed to the evaluation ("-f calibration_datav3.txt") is its eval text
        name = re.escape(m.group(0).rsplit("/", 1)[-1])
        passed = [f for f in re.finditer(rf"(?:-f|--file)\s+\S*{name}", text) if not imatrix_command(text, f.start())]
        return bool((EVAL_FILE.search(before) and not imatrix_command(text, m.start())) or passed or passed_by_name(text, m))
    if m.re is DESCRIBED.compiled and m.group(0).lower().startswith("calibrated") and before[before.rfind("\n") + 1 :].lstrip().startswith("|"):
        return True  # a table row's label ("| NVFP4, calibrated scales | ..."): a variant compared, not the quants' calibration
    if m.re is LABELLED.compiled and m.group(0).rstrip(" *").endswith((":", "：")) and FIELD_AFTER_WORD.search(before):
        return True  # "Arm chosen by calibration: `alpha025`": the word ends a phrase, it labels no field
    if m.re is TRAIN_SPLIT.compiled:
        rest = sentence.replace(m.group(0), " ")
        return not TRAINING.search(rest)
    return False
