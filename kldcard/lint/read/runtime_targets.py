"""Hardware or an engine named as what the files are *for*, not where the KLD was measured (D2 vetoes beside
kldcard.lint.read.runtime_roles'): cards and fact sheets say which GPU a checkpoint targets, must fit in, or
is served on, and which engine a release needs or is put out for.

The rule: in the clause before the name (since the last sentence end or ";"), a word of aim, fit, need or
serving, with no KL term between it and the name:
- aim: "targets", "aimed at", "designed / meant / built / intended for", "apunta a", "pensad[oa] para",
  "diseñad[oa] para", "destinad[oa] a", "conçu pour", "ausgelegt für";
- fit: "fits (in)", "to fit", "quepa en", "cabe en", "tient dans";
- need: "needs", "requires", "requiere", "necesita", "nécessite", "benötigt";
- release: "puts out / releases / publishes ... for";
- recommended: "recommended GPUs: …", "GPU recomendadas: …";
- a list item or field whose label is a requirement ("GPU recomendadas: …", "**VRAM mínima**: …", "Minimum VRAM: …",
  "VRAM estimada: …"): the label governs every clause of the item, also those after a ";" ("GPU recomendadas: con
  contextos cortos, RTX 4090; con contextos largos, A100 o H100"), except a clause that says it measured there;
- serving or inference: "servirse", "servido", "de servicio", "hacer inferencia en", "inferencia en",
  "inference on", "repartido en" (the model split across devices to run it).
And an engine as the owner of a corpus's files ("source files from the <engine> framework"); and a bold caption about serving or speed ("**Rendimiento de servicio** (RTX ...)", "**Serving throughput**").
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import clause_stops
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

AIM = re.compile(
    r"\b(?:targets?|targeting|aimed\s+at|(?:designed|meant|built|intended|optimi[sz]ed|made|tuned)\s+(?:\w+\s+){0,2}?for|"
    r"apunta\s+a|pensad[oa]s?\s+para|diseñad[oa]s?\s+para|destinad[oa]s?\s+a|optimizad[oa]s?\s+para|conçue?s?\s+pour|"
    r"ausgelegt\s+für|fits?|fitting|to\s+fit|quepa|caben?|tient|needs?|requires?|requiere|necesita|nécessite|benötigt|"
    r"(?:puts?|putting)\s+(?:\w+\s+){0,3}?out\s+(?:\w+\s+){0,2}?for|releas(?:es|ed)\s+(?:\w+\s+){0,3}?for|"
    r"recommended|recomendad[oa]s?|recommandée?s?|empfohlene?n?|"
    r"servir(?:se|lo|la)?|servid[oa]s?|de\s+servicio|hacer\s+inferencia|inferencia\s+en|inference\s+on|repartid[oa]\s+en)\b",
    I,
)
KL = re.compile(KL_MENTION + r"|perplexit|\bmedid|\bmeasur|\bmesur", I)
# the last sentence end or ";" before the name (read.clause_stops: a stop with a space after it, not "llama.cpp" or
# "0.9"; a blank line): the module's clause, longer than runtime_roles.CLAUSE_START's (a colon and a line break go on)
CLAUSE_END = clause_stops.LAST
SERVING_CAPTION = re.compile(
    r"^\s*\*\*[^*\n]*\b(?:rendimiento|servicio|serving|throughput|velocidad|vitesse|speed|latenc\w+|tok(?:ens)?/s)\b[^*\n]*\*\*", I
)


# the engine as the owner of a corpus's files, not the run's: "six source files from the MLX framework at v0.30.0"
SOURCE_OF = re.compile(r"\b(?:files?|sources?|code|corpus|texts?|documents?|excerpts?|archivos|fuentes|código)\s+(?:\w+\s+){0,2}?(?:from|of|in|de|del)\s+(?:the\s+|la\s+|el\s+)?$", I)


# a record's hardware field ("Hardware RTX 3090 24GB", "- hardware: Tesla T4 / CUDA", "| GPU | 8xH100 |"): the line is
# its own clause, whatever the record's earlier lines say (a spec table flattened to "Key Value" lines has no full stops)
HARDWARE_FIELD = re.compile(r"^[ \t]*(?:[-*•|][ \t]*)?\**(?:hardware|gpus?|devices?|machine|accelerators?)\**[ \t]*(?:[:：|][ \t]*|[ \t])\**[ \t]*$", I)


# the label of a line (a list item, a field, or a line that opens with a label) that states a requirement: recommended
# or required hardware, or the minimum / estimated memory a user needs ("GPU recomendadas:", "**VRAM mínima**:",
# "Minimum VRAM:", "VRAM estimada:"); the label ends at the line's first colon, so a colon later in it is not read as one
REQUIREMENT_LABEL = re.compile(
    r"[ \t]*(?:[-*•+][ \t]+)?[*_]{0,2}(?P<label>[^:：*_\n]{2,40})[*_]{0,2}[ \t]*[:：]", I
)
# (not every aim word: "Plataforma objetivo: <device>, el único entorno validado" names the tested machine, es_ficha
# 1bit_monster holdout9/c)
REQUIREMENT_WORD = re.compile(
    r"\b(?:recommended|suggested|recomendad[oa]s?|sugerid[oa]s?|recommandée?s?|empfohlene?n?|required|requerid[oa]s?|requise?s?|"
    r"minimum|m[íi]nim[oa]s?|minimales?|mindest\w*|estimated|estimad[oa]s?|estim[ée]e?s?)\b",
    I,
)
# ... and it names hardware or memory: a "Recommended quant:" or "Configuración recomendada:" item is about the files,
# and the machine in it may be where the figures came from
REQUIREMENT_NOUN = re.compile(r"\b(?:GPUs?|VRAM|RAM|hardware|memor(?:y|ia)|m[ée]moire|Speicher|Grafikkarten?|tarjetas?|cards?|devices?|"
                              r"dispositivos?|machines?|m[áa]quinas?)\b", I)
# ... and the measurement that keeps a clause of such an item as the KLD's ("la R9700 es donde midió el autor", "all
# figures come from one RTX 4090", "resultados obtenidos en una RTX 4090")
MEASURED_HERE = re.compile(r"\bmidi[óo]|\bmedid|\bmedici|\bmeasur|\bmesur|\bgemessen|\btested\b|\bcome\s+from\b|\bobtenid|\bobtid", I)


def requirement_item(text: str, m: re.Match[str]) -> bool:
    """True when ``m`` lies in a list item or field labelled as a requirement, in a clause that measured nothing."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    label = REQUIREMENT_LABEL.match(text, line_start)
    if label is None or label.end() > m.start():
        return False
    words = label.group("label")
    # a requirement of hardware or memory (a KL figure's own label is none: "Minimum KLD: 0.0001 on ...")
    if not (REQUIREMENT_WORD.search(words) and REQUIREMENT_NOUN.search(words)) or KL.search(words):
        return False
    head = text[max(label.end(), m.start() - 200) : m.start()]  # the window aimed() reads (CLAUSE_END scans back from its end)
    cut = CLAUSE_END.search(head)
    line_end = text.find("\n", m.end(), m.end() + 200)  # bounded: the tail is read up to 200 characters
    tail = text[m.end() : line_end if line_end >= 0 else m.end() + 200]
    stop = clause_stops.NEXT.search(tail + "\n")  # (the tail's end is the line's: a stop there ends the clause too)
    clause = (head[cut.end() :] if cut else head) + m.group(0) + (tail[: stop.start()] if stop else tail)
    return not KL.search(clause) and not MEASURED_HERE.search(clause)


def aimed(text: str, m: re.Match[str]) -> bool:
    """True when the clause before ``m`` says the files are aimed at, fit in, need or are served on it, or the list item
    around it is labelled as a requirement."""
    head = text[max(0, m.start() - 200) : m.start()]
    if SOURCE_OF.search(head) or requirement_item(text, m):
        return True
    line_head = head[head.rfind("\n") + 1 :]
    cut = CLAUSE_END.search(head)
    clause = line_head if HARDWARE_FIELD.match(line_head) else head[cut.end() :] if cut else head
    found = None
    for found in AIM.finditer(clause):
        pass
    if found is not None and not KL.search(clause[found.end() :]):
        return True
    line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
    return bool(SERVING_CAPTION.match(line))
