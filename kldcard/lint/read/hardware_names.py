"""The one table of the accelerators and machines cards name as where a run was made (D2 runtime), by maker, each
spelling with a sample of its own (STYLE rule 20: data that varies by the world lives in data, with a real sample).

Read by the D2 evidence pattern (``evidence_patterns.HARDWARE``), by the reading's value (``values``: which machine)
and by the evaluation-text reader's veto of machine names (``eval_text_uses``). The order is the alternation's: at
one position the first spelling that matches wins, so a longer form goes before a shorter one it begins with.

Two rules of the names, kept in the prefix of :data:`HARDWARE`:
- a count written against the name is a node's size, not part of a word ("8xH200", "4xA100": general number grammar);
- a CJK character glued to the name does not make it part of a word ("gfx1030のFP8", "R9700は", "在H100上": the ends
  are ASCII word ends, as ``kldcard.lint.read.numbers`` reads numbers; ja_sllm, ja_r9700, ja_exl3_rocm, ja_mi25 ...).
A short name that is also a common label ("T4", "L4", "A10") counts only with its maker, "GPU" or an article beside it
("an NVIDIA T4", "a T4 GPU", "one L4"): not "on L4" (layer 4), "on A10" (an appendix). Intel's "Arc" and its series
letter are case-sensitive ("arc" is a word).
"""

from __future__ import annotations

from dataclasses import dataclass

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)


@dataclass(frozen=True)
class Accelerator:
    maker: str
    spelling: str  # a regular expression, matched case-insensitively (``(?-i:...)`` where case matters)
    sample: str  # a real way a card writes it, which the spelling matches whole (tests/test_hardware_names.py)


TABLE: tuple[Accelerator, ...] = (
    Accelerator('NVIDIA', r"RTX\s*(?:PRO\s*)?\d{4}[A-Za-z0-9_]*", 'RTX PRO 6000'),
    Accelerator('NVIDIA', r"GTX\s*\d{3,4}", 'GTX 1080'),
    Accelerator('NVIDIA', r"[HBA]\d{3}(?![A-Za-z0-9_])", 'H100'),
    Accelerator('NVIDIA', r"H200", 'H200'),
    Accelerator('NVIDIA', r"G[HB][23]00(?![A-Za-z0-9_])", 'GB200'),
    Accelerator('NVIDIA', r"A6000", 'A6000'),
    Accelerator('NVIDIA', r"L40S?", 'L40S'),
    Accelerator('AMD', r"MI\d{3}X?", 'MI300X'),
    Accelerator('NVIDIA', r"[PV]100s?(?![A-Za-z0-9_])", 'V100'),
    Accelerator('AMD', r"gfx\d{3,4}[a-z]?(?![A-Za-z0-9_])", 'gfx1100'),
    Accelerator('AMD', r"R9700(?![A-Za-z0-9_])", 'R9700'),
    Accelerator('AMD', r"V620(?![A-Za-z0-9_])", 'V620'),
    Accelerator('AMD', r"W7900(?![A-Za-z0-9_])", 'W7900'),
    Accelerator('NVIDIA', r"GB10(?![A-Za-z0-9_])", 'GB10'),
    Accelerator('NVIDIA', r"DGX Spark", 'DGX Spark'),
    Accelerator('AMD', r"Strix Halo", 'Strix Halo'),
    Accelerator('Apple', r"Mac Studio", 'Mac Studio'),
    Accelerator('Apple', r"Mac mini", 'Mac mini'),
    Accelerator('Apple', r"MacBook", 'MacBook'),
    Accelerator('Intel', r"i[3579]-\d{4,5}[A-Za-z0-9_]*", 'i9-13900K'),
    Accelerator('Intel', r"Granite Rapids", 'Granite Rapids'),
    Accelerator('AMD', r"RX\s*\d{4}\s*XTX?", 'RX 7900 XTX'),
    Accelerator('Apple', r"M[1-9]\s*(?:Pro|Max|Ultra|Air)(?![A-Za-z0-9_])", 'M2 Ultra'),
    Accelerator('AMD', r"EPYC\s*\d{4}[A-Za-z0-9_]*", 'EPYC 9654'),
    Accelerator('AMD', r"Ryzen\s*\d\s*\d{4}[A-Za-z0-9_]*", 'Ryzen 9 7950X'),
    Accelerator('Intel', r"Xeon\s*[A-Za-z0-9_]+", 'Xeon 6980P'),
    Accelerator('NVIDIA', r"(?:a|one|two|\d+x)\s+(?:single\s+)?(?:RTX\s*)?(?:3090|4090|5090|3080|4080)(?:\s?Ti)?(?![A-Za-z0-9_])", 'a single 3090'),
    Accelerator('Intel', r"(?:Intel\s+)?(?-i:Arc)\s+(?:Pro\s+)?(?-i:[ABC])\d{2,3}[A-Z]?(?![A-Za-z0-9_])", 'Intel Arc Pro B70'),
    Accelerator('Intel', r"Gaudi\s*[23]\b", 'Gaudi 3'),
    Accelerator('AMD', r"Radeon\s+(?:RX\s+|Pro\s+|AI\s+Pro\s+)?[A-Z]?\d{3,4}[A-Z]*(?:\s*XTX?)?", 'Radeon AI Pro R9700'),
    Accelerator('AMD', r"\b7900\s*XTX?\b", '7900 XTX'),
    Accelerator('NVIDIA', r"RTX\s*A\d{4}\b", 'RTX A4000'),
    Accelerator('NVIDIA', r"\bA[2-5]000\b", 'A5000'),
    Accelerator('NVIDIA', r"(?:NVIDIA|Tesla)\s+(?:T4|L4|A10G?|A[1-4]0|H20)\b", 'NVIDIA T4'),
    Accelerator('NVIDIA', r"\b(?:T4|L4|A10G?|A[34]0|H20)\s+GPUs?(?![\w-])", 'L4 GPU'),
    Accelerator('NVIDIA', r"\b(?:an?|one|single)\s+(?:T4|L4|A10G?|A[34]0|H20)\b", 'one A10G'),
    Accelerator('Google', r"TPU\s*v\d[a-z]*\b", 'TPU v5e'),
    # a TPU generation by its letter and the chip or pod word, "TPU" left out ("on 32 v6e chips", "sobre 32 chips v6e")
    Accelerator('Google', r"v[4-7][ep](?:-\d+)?(?=\s+(?:chips?|pods?|slices?|VMs?|hosts?)\b)|chips?\s+v[4-7][ep]\b", 'chips v6e'),
    # a TPU generation after "TPU" or "TPU VM", with a slice size ("TPU VM v5p-8", "TPU v5litepod-16")
    Accelerator('Google', r"TPU(?:\s+VM)?\s*\(?`?v\d+[a-z]*(?:-?\d+)?\b", 'TPU VM v5p-8'),
    Accelerator('AWS', r"Trainium\s*\d\b", 'Trainium2'),
    Accelerator('AWS', r"Inferentia\s*\d\b", 'Inferentia 2'),
    Accelerator('Huawei', r"Ascend\s*\d{3}[A-Z]?\b", 'Ascend 910B'),
    Accelerator('Tenstorrent', r"(?:Tenstorrent\s+)?(?:Wormhole|Blackhole|Grayskull)(?:\s+n\d{3})?\b", 'Wormhole n300'),
    Accelerator('Tenstorrent', r"Tenstorrent\s+[np]\d{3}\b", 'Tenstorrent p150'),
    Accelerator('Qualcomm', r"Snapdragon\s*(?:X\s+Elite|\d{3,4})", 'Snapdragon X Elite'),
    Accelerator('NVIDIA', r"Jetson\s+(?:AGX\s+|Orin\s+)?\w+", 'Jetson AGX Orin'),
    Accelerator('Raspberry Pi', r"Raspberry\s+Pi(?:\s*\d)?", 'Raspberry Pi 5'),
    Accelerator('Apple', r"Apple\s+M[1-9](?:\s*(?:Pro|Max|Ultra))?\b", 'Apple M3 Max'),
    Accelerator('AMD', r"Threadripper\s*(?:PRO\s*)?\d{4}\w*", 'Threadripper PRO 7995WX'),
    Accelerator('Intel', r"Core\s+Ultra\s*\d?\s*\d{3}\w*", 'Core Ultra 9 285K'),
    Accelerator('AWS', r"Graviton\s*\d\b", 'Graviton4'),
    Accelerator('Ampere', r"Ampere\s+Altra\b", 'Ampere Altra'),
    Accelerator('AMD', r"Ryzen\s+AI\s+Max\+?\s*\d{3}\b", 'Ryzen AI Max+ 395'),
    Accelerator('AMD', r"Radeon\s+(?:RX\s*|Pro\s*|AI\s*)?\w*\d{3,4}\w*\b", 'Radeon 890M'),
    Accelerator('ASUS', r"(?:Ascent\s+)?GX10\b", 'Ascent GX10'),  # ASUS's GB10 box
    # a consumer card by its number alone, with an article or a count before it ("the 5060 Ti", "2x 5060 Ti", "1x
    # 4090"), not a size or a speed after it ("a 4090 GB"); a data-centre card with its maker, an article or a count
    # ("an A4500", "2x T4"): general grammar of a rig (llamacpp_mxfp4 PR draft, mamba130m notes, blind_ik log)
    Accelerator('NVIDIA', r"(?:the|an?|one|our|my)\s+(?:RTX\s*)?(?:50[6-9]0|40[6-9]0|30[6-9]0)(?:\s?Ti)?\b(?!\s*(?:GB|tok))", 'the 5060 Ti'),
    Accelerator('NVIDIA', r"(?:NVIDIA|Tesla|an?|one|single)\s+(?:A[245]000|A4500)\b", 'an A4500'),
    Accelerator('NVIDIA', r"[1-9]\d?\s*[x×]\s*(?:NVIDIA\s+|Tesla\s+)?(?:RTX\s*)?(?:[3-5]0[6-9]0(?:\s?Ti)?|T4|A10G?|L4|A40|A30)\b(?!\s*(?:GB|tok))", '2x 5060 Ti'),
    # a CUDA compute architecture names the GPU generation the run used ("sm_60", "sm_120a"; holdout3 MTP FP16
    # canary, holdout10 P100 ledger)
    Accelerator('NVIDIA', r"sm_(?:[5-9]\d|1[0-2]\d)[af]?\b", 'sm_120a'),
)

# the names as one pattern: a word start, or a count glued before the name ("8xH200")
HARDWARE = r"(?:(?<![A-Za-z0-9_])|(?<=\d[xX]))(?:" + "|".join(a.spelling for a in TABLE) + ")"

# the context a spelling above may begin with, before the machine's name: an article or "one" ("the 5060 Ti", "an
# A4500"), a count ("2x T4"). It stays in the match, since Python's look-behinds take one width only and these are of
# several, and is no part of the name: the reader of the name drops it (:func:`machine_name`)
CONTEXT = re.compile(r"^(?:the|an?|one|our|my|single|[1-9]\d?\s*[x×])\s*", re.IGNORECASE | re.ASCII)


def machine_name(spelled: str) -> str:
    """The machine's name in a match of :data:`HARDWARE`: white space folded, the context before the name dropped."""
    return CONTEXT.sub("", " ".join(spelled.split()))
