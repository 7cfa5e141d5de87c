"""Which prompt position each entry of a llama-cpp-python ``echo`` + ``logprobs`` answer belongs to.

llama-cpp-python (0.3.x, ``Llama._create_completion``) builds the echoed lists like this, with
``prompt`` the ids it evaluated and ``rows`` its logits rows (row ``r`` = the distribution after
``prompt[0..r]``, our position ``r``)::

    all_tokens = prompt[1:] if prompt[0] == BOS else prompt,  then the sampled token
    for idx, tok in enumerate(all_tokens[:len(rows)]):     # zip() with the rows truncates
        if tok == BOS: continue                             # every entry equal to its BOS id is dropped
        entry ← (string of tok, top_logprobs of row idx)    # row idx = our position idx
    entry 0 is nulled

So entry ``e`` is position ``idx_e``, where the ``idx`` skipped are exactly those whose token is the
server's BOS id — even for models without a BOS of their own (a GGUF without one gets a default id:
``,`` = 11 in the tiny Qwen3 test model, so every comma disappears). The server does not say which id
that is; :func:`align_echo` finds it from the counts (the number of entries missing must equal the
number of occurrences of the id) and checks the candidate layout against the echoed token strings,
compared through a string → id map that may not know every string (``None``: unknown or ambiguous —
partial UTF-8 bytes, which the server decodes to ``""``, whitespace runs that tokenize differently
alone). Nothing here depends on character offsets, so runs of spaces, tabs, CRLF, emoji and CJK text
align as plain ASCII does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from kldcard.errors import InputError

WILDCARD = -1  # the sampled token: its id is not reported


def echo_layout(prompt: Sequence[int], n_entries: int, bos: int | None) -> list[int] | None:
    """Positions of the echoed entries if the server's BOS id is ``bos`` (``None``: nothing dropped),
    or ``None`` when that id cannot give ``n_entries`` entries."""
    n = len(prompt)
    start = 1 if (bos is not None and n and prompt[0] == bos) else 0
    all_tokens = list(prompt[start:]) + [WILDCARD]
    idxs = [i for i, t in enumerate(all_tokens[:n]) if t != bos or t == WILDCARD]
    if len(idxs) == n_entries:
        return idxs
    # The sampled token (last) may itself equal the BOS id and be dropped as well.
    if start == 1 and len(idxs) == n_entries + 1 and idxs[-1] == n - 1:
        return idxs[:-1]
    return None


def align_echo(
    prompt: Sequence[int],
    entry_ids: Sequence[int | None],
    *,
    bos: int | None = None,
    max_mismatch: float = 0.05,
    where: str = "the server",
) -> list[int]:
    """Position of each echoed entry (see the module docstring). ``entry_ids``: the id each echoed
    token string maps to, or ``None`` when the string does not identify one id. ``bos``: the
    server's BOS id when known (from the model's GGUF); otherwise every id whose count fits is tried
    and the layout whose entries agree with the strings is taken. Raises :class:`InputError` when no
    layout agrees (more than ``max_mismatch`` of the identifiable entries disagree) or two do."""
    n_entries = len(entry_ids)
    counts = Counter(prompt)
    missing = len(prompt) - n_entries
    if bos is not None:
        candidates: list[int | None] = [bos]
    else:
        candidates = [None] if missing == 0 else []
        candidates += [t for t, c in counts.items() if c in (missing, missing + 1, missing - 1)]
    scored = []
    for cand in candidates:
        layout = echo_layout(prompt, n_entries, cand)
        if layout is None:
            continue
        start = 1 if (cand is not None and prompt and prompt[0] == cand) else 0
        known = bad = 0
        for e, idx in enumerate(layout):
            got = entry_ids[e]
            # entry idx carries the string of all_tokens[idx] = prompt[idx + start] (or the sampled token)
            tok = prompt[idx + start] if idx + start < len(prompt) else WILDCARD
            if got is None or tok == WILDCARD:
                continue
            known += 1
            bad += got != tok
        scored.append((bad / max(known, 1), bad, cand, layout))
    if not scored:
        raise InputError(
            f"{where}: cannot align the {n_entries} echoed prompt tokens with the {len(prompt)} token ids of "
            f"its tokenizer (no id accounts for the {missing} missing entries)"
        )
    scored.sort(key=lambda s: (s[0], s[2] is not None))
    rate, bad, cand, layout = scored[0]
    if rate > max_mismatch:
        raise InputError(
            f"{where}: cannot align the {n_entries} echoed prompt tokens with the {len(prompt)} token ids of its "
            f"tokenizer ({bad} echoed strings disagree with the best layout)"
        )
    rivals = [s for s in scored[1:] if s[0] <= max_mismatch and s[3] != layout]
    if rivals and rivals[0][0] == rate:
        raise InputError(
            f"{where}: the echoed prompt tokens fit two layouts (dropped ids {cand} and {rivals[0][2]}); pass the "
            "model's GGUF with --vocab-gguf so kldcard knows the server's BOS id"
        )
    return layout


def entry_ids_of(strings: Sequence[object], string_id: Callable[[str], int | None]) -> list[int | None]:
    """The id each echoed token string identifies, or None (not a string, unknown or ambiguous)."""
    return [string_id(s) if isinstance(s, str) and s else None for s in strings]
