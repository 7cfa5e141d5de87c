"""D4 (calibration) data as cards write it beyond the English words of kldcard.lint.read.calibration: the rule
is that a calibration counts as disclosed when its *data* is named or described (issue 28's R8'): a set named,
an explicit "none", the data described by its kind, size or role ("calibration windows", "wiki-calibrated",
"an imatrix of 10 M tokens"). Scales or a quantizer merely called "calibrated" describe no data: not D4.

- an explicit none in the card languages: "sans imatrice", "ohne imatrix", "без imatrix", "imatrix無し",
  "不使用imatrix", "imatrix 없이", "w/o imatrix", "non-imatrix";
- calibration data by its noun: "calibration windows / samples / prompts / corpus", "texte de calibration",
  "Kalibrierdaten", "калибровочный набор", "校正コーパス", "キャリブレーションデータ", "校准数据", "보정 데이터";
- data named by the word before "-calibrated" ("wiki-calibrated", "code-calibrated");
- the size of an importance matrix's data ("imatrix of 10M tokens", "imatrice de 10 M jetons");
- what an importance matrix or a calibrating quantizer was made from, by kind or size ("imatrix made from a mix
  of chat and code data", "GPTQ with 256 samples", "DWQ sobre 2.048 muestras", "imatrixデータ"); an explicit "imatrix: none" field;
- a calibration option or key with its value (``--calib-dataset pileval``, ``num_calibration_samples=512``);
- a heading about calibration with a dataset field under it ("## Calibration data" ... "- Corpus: `org/set`").

(The ``-f`` file of a ``llama-imatrix`` command is its calibration text: kldcard.lint.read.calibration.veto.)
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.numbers import THOUSANDS

I = re.IGNORECASE

_IMATRIX = r"(?:imatrix|imatrice|importance[- ]matrix|matrice d'importance|Importance-Matrix|матриц\w*\s+важности)"
NONE = re.compile(
    r"\bsans\s+(?:l'|une?\s+)?(?:" + _IMATRIX + r"|(?:donn[ée]es\s+de\s+|jeu\s+de\s+)?(?:calibration|calibrage|[ée]talonnage))\b|"
    r"\bohne\s+(?:" + _IMATRIX + r"|Kalibrier\w*)|"
    r"(?<![\w])без\s+(?:" + _IMATRIX + r"|калибров\w*)|"
    r"\bimatrix\s*(?:無し|なし|不使用|未使用|없이|미사용)|(?:無|无|不使用|未使用|不用|没有|無し)\s*imatrix\b|"
    r"(?:不使用|未使用|无需|無需|没有)\s*校准|"
    r"\bw/o\s+(?:an?\s+)?" + _IMATRIX + r"|\bnon-imatrix\b|\bimatrix-free\b|"
    r"\b(?:imatrix|calibration(?:\s+(?:data|set))?)\**\s*[:=]\s*\**\s*(?:none|no|off|false|n/a)\b",
    I,
)
_DATA_NOUN = r"(?:data(?:sets?)?|sets?|corpus|corpora|texts?|samples?|windows?|prompts?|sequences?|split|mix(?:ture)?|tokens)"
PATTERNS: list[re.Pattern[str]] = [
    NONE,
    # calibration data by its noun, in the card languages
    re.compile(
        r"\b(?:imatrix\s+)?calibration\s+" + _DATA_NOUN + r"\b|"
        r"\b(?:texte|jeu|corpus|donn[ée]es|[ée]chantillons?)\s+de\s+(?:calibration|calibrage|[ée]talonnage)\b|"
        r"\b(?:datos|conjunto|corpus|dados|texto)\s+de\s+calibra(?:ci[óo]n|[çc][ãa]o)\b|"
        r"\bKalibrier(?:ungs)?(?:daten(?:satz)?|set|korpus|text)\w*|"
        r"калибровочн\w+\s+(?:данн\w+|набор\w*|корпус\w*|текст\w*|выборк\w*)|"
        r"(?:校正|キャリブレーション)\s*(?:corpus|コーパス|データ|用データ|テキスト|セット)|"
        r"校准\s*(?:数据|数据集|集|语料|文本|样本)|(?:캘리브레이션|보정)\s*(?:데이터|데이터셋|세트)",
        I,
    ),
    # the data named by the word before "-calibrated" ("wiki-calibrated"), not "well-calibrated" / "un-calibrated",
    # nor the method ("imatrix-calibrated K-quants" names no data: CONVENTIONS.md, calibration described)
    # (a word without digits: "A100-calibrated" names the hardware, not data)
    re.compile(r"\b(?!(?:well|un|re|self|pre|poorly|mis|imatrix|matrix|importance)-)[A-Za-z][A-Za-z_.]*-calibrated\b", I),
    # an importance matrix's data by its size ("imatrix of 10M tokens", "imatrice de 10 M jetons")
    re.compile(r"\b" + _IMATRIX + r"\s+(?:of|de|von|из|на)\s+\d[\d.,]*\s*[kKM]?\s*(?:tokens?|jetons|Token|токенов|chunks)\b", I),
    # the data an importance matrix or a calibrating quantizer was made from, described by its kind or size:
    # "imatrix made from a mix of chat and code data", "GPTQ with 256 samples", "AWQ (pileval, 128 samples)"
    re.compile(
        r"\b(?:imatrix|importance matrix)\s+(?:[\w\-]+\s+){0,2}?(?:from|on|using|over)\s+[^.\n]{0,50}?"
        r"\b(?:data|dataset|corpus|text|texts|samples|chats?|conversations|prompts|mix)\b|"
        # (a count as the card languages write it, read.numbers.THOUSANDS: "2,048", "2.048", "2 048"; "muestras", "amostras", "échantillons")
        r"\b(?:GPTQ|AWQ|SmoothQuant|AutoRound|DWQ|imatrix)\b[^.\n]{0,40}?(?<![\w.,])(?:" + THOUSANDS + r"|\d+)\s*"
        r"(?:calibration\s+)?(?:samples|sequences|rows|muestras|amostras|[ée]chantillons|secuencias|sequ[êe]ncias)\b|"
        r"\bimatrix\s*(?:数据|數據|データ|데이터)",
        I,
    ),
    # a calibration option or key with its value
    re.compile(
        r"(?:--|\b)(?:calib(?:ration)?[-_](?:dataset|data|set|file|corpus)|num[-_]calib(?:ration)?[-_]samples|calib[-_]samples)"
        r"(?:\s*[=:]\s*|\s+)[`'\"]?[\w.\-/]+",
        I,
    ),
    # a heading about calibration, then a dataset / corpus field within a few lines
    re.compile(
        r"^#{1,6}[^\n]*(?:calibrat|imatrix|キャリブレーション|校正|校准|étalonnage|Kalibrier)[^\n]*\n(?:[^\n#]*\n){0,6}?"
        r"[ \t>*\-+|]*\**(?:corpus|dataset|data(?:\s+set)?|calibration\s+(?:set|data))\**\s*[:：|]\s*[^\n]*?[`'\"]?[\w.\-]+/[\w.\-]+",
        I | re.MULTILINE,
    ),
]
NONE_PATTERN, DATA_NOUN, X_CALIBRATED, SIZE, MADE_FROM, OPTION, HEADED = PATTERNS
