"""Round 21's experiment (issue 28): a learnt reading over the card body's words, scored on holdouts it did not learn from.

    .venv/bin/python scripts/learnt_reading_experiment.py --hold-out real-holdout-15,real-holdout-16

Trains one L2-regularised logistic regression per disclosure on the labelled KLD-claiming texts under ``tests/data``
(the invented corpus, the real development set and every real holdout not held out), on the body's words and
adjacent word pairs; picks each disclosure's threshold on 5-fold out-of-fold predictions (the lowest at which the model
alone reaches precision 0.90 on texts that say it); keeps a disclosure only where the model, used just where the rules
find nothing, adds 0.01 recall out of fold and an incomplete finding exists (KLD33n). Then prints, on the held-out
splits, the rules alone and the rules with the model side by side, and a probe: the model's probability on a complete
card (``examples/cards/KLD332-...`` with its runtime completed) and on that card with one disclosure's line deleted.

``--lines`` trains instead a model of the *lines* that state a disclosure (positives: the lines where the rules read it
in texts that say it; negatives: every line of texts that do not) and prints, on the held-out splits, a threshold sweep
of the best line's probability where the rules find nothing, with the same probe. The sweep is seen on the held-out
texts, so it is a direction to try, not a measurement.

Why it is an experiment and not part of the linter: the probe shows the model reads how *thorough* a card is, not
whether it states the disclosure (deleting the reference line leaves D1 above its threshold), so as a verdict it would
hide the one omission on a careful card. README, "Round 21", has the figures. Needs numpy (a test dependency).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import helpers_prose as corpus  # noqa: E402  (the labelled corpus's reader: tests/helpers_prose.py)

from kldcard.card.document import parse_card, read_card  # noqa: E402
from kldcard.lint.markdown import scan  # noqa: E402
from kldcard.lint.prose import analyse  # noqa: E402
from kldcard.lint.read.complete import CAN_BE_INCOMPLETE  # noqa: E402

WORD = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)?")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
TEXT_LIMIT = 400_000  # characters of a body read
# a body with fewer distinct words and pairs is left to the rules: on a few lines the probability is the corpus's prior
MIN_FEATURES = 100


def tokens(text: str) -> list[str]:
    """Lower-case words; a number as its shape (``<dec>`` for 0.0123, ``<n2>`` for 42, ``<long>`` for 7+
    digits) unless it has three to six digits (512, 4096: lengths and counts are words here); CJK runs
    as overlapping character pairs (no spaces to split on)."""
    out: list[str] = []
    for m in WORD.finditer(text[:TEXT_LIMIT].lower()):
        w = m.group()
        if w[0].isdigit():
            w = "<dec>" if ("." in w or "," in w) else (w if 3 <= len(w) <= 6 else f"<n{len(w)}>" if len(w) < 3 else "<long>")
            out.append(w)
        elif len(w) > 2 and CJK.search(w):
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        else:
            out.append(w)
    return out


def features(text: str) -> set[str]:
    """The words and adjacent word pairs of ``text`` (each counted once)."""
    t = tokens(text)
    return {*t, *(f"{a} {b}" for a, b in zip(t, t[1:]))}


def probability(weights: dict[str, float], bias: float, feats: set[str]) -> float:
    """The model's probability; features weigh 1/sqrt(their count) each (the training's normalisation)."""
    z = bias + sum(weights.get(f, 0.0) for f in feats) / math.sqrt(max(1, len(feats)))
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


PRECISION = 0.90  # the model alone, out of fold, at the threshold
MIN_DF = 3  # a feature seen in fewer training texts is dropped
KEEP = 3000  # largest weights kept per disclosure (as a shipped file would keep; the figures are of this model)
FOLDS = 5
LAMBDA, STEPS, RATE = 1e-3, 400, 0.05


def texts() -> list[dict]:
    """Every labelled KLD-claiming text, read once: its body, lines, and what its labels want per disclosure."""
    out = []
    for name, lab in sorted(corpus.labels().items()):
        if not lab["claims"]:
            continue
        card = read_card(corpus.path(name))
        wanted = {n: corpus.wanted(lab, n) for n in range(1, 10)}
        found = {n: w != "M" for n, w in wanted.items()}  # as the corpus is scored
        # what the model learns: the text *says* it (an I label comes from a tool's defaults, which the
        # rules already infer; learning it would teach "Mean KLD" -> positions stated)
        said = {n: w == "S" for n, w in wanted.items()}
        doc = scan(card.body, card.body_line)
        out.append({"name": name, "split": lab["split"], "card": card, "body": "\n".join(doc.lines), "lines": doc.lines,
                    "first": doc.first_line, "found": found, "said": said})
    return out


def matrix(feats: list[set[str]], vocab: dict[str, int]) -> np.ndarray:
    x = np.zeros((len(feats), len(vocab)), np.float32)
    for i, fs in enumerate(feats):
        for f in fs:
            k = vocab.get(f)
            if k is not None:
                x[i, k] = 1
        x[i] /= np.sqrt(max(1, len(fs)))  # probability's normalisation: every feature of the text counts
    return x


def adam_step(w: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int) -> None:
    """Step ``t`` (from 1) of Adam on ``w`` with gradient ``g``; ``w`` and the moment estimates ``m``, ``v`` in place."""
    m *= 0.9
    m += 0.1 * g
    v *= 0.999
    v += 0.001 * g * g
    w -= RATE * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Adam on the mean log-loss plus LAMBDA/2 |w|^2; deterministic (no sampling)."""
    w = np.zeros(x.shape[1], np.float32)
    b = 0.0
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, STEPS + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = x.T @ (p - y) / len(y) + LAMBDA * w
        b -= RATE * float((p - y).mean())
        adam_step(w, g, m, v, t)
    return w, b


def pr(got: list[bool], want: list[bool]) -> tuple[float, float]:
    tp = sum(g and w for g, w in zip(got, want))
    fp = sum(g and not w for g, w in zip(got, want))
    fn = sum(w and not g for g, w in zip(got, want))
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def rule_found(rows: list[dict]) -> list[dict]:
    """The rules' reading of each text: found (not missing) per disclosure, 0: whether any claim was read, and
    "ev": per disclosure the body lines (0-based) of the evidence the rules read in the text itself."""
    out = []
    for r in rows:
        rep = analyse(r["card"])  # corpus.report, on the card texts() read
        got = corpus.statuses(rep)
        ev = {n: {e.line - r["first"] for c in rep.readings for e in c.disclosures[n].evidence
                  if e.line is not None and e.key is None and e.tool is None} for n in range(1, 10)}
        out.append({n: got[n] != "M" for n in range(1, 10)} | {0: bool(rep.readings), "ev": ev})
    return out


def train(rows: list[dict], rules: list[dict] | None = None) -> dict:
    feats = [features(r["body"]) for r in rows]
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    names = sorted(f for f, c in df.items() if c >= MIN_DF)
    vocab = {f: k for k, f in enumerate(names)}
    x = matrix(feats, vocab)
    long_enough = [len(fs) >= MIN_FEATURES for fs in feats]  # the model reads no shorter body
    folds = np.arange(len(rows)) % FOLDS
    out = {}
    for n in CAN_BE_INCOMPLETE:  # a learnt reading would be an incomplete one (KLD33n); D7 and D8 have none
        y = np.array([r["said"][n] for r in rows], np.float32)
        oof = np.zeros(len(rows))
        for k in range(FOLDS):
            tr = folds != k
            w, b = fit(x[tr], y[tr])
            oof[~tr] = 1 / (1 + np.exp(-(x[~tr] @ w + b)))
        threshold = next((t for t in np.arange(0.5, 0.99, 0.02) if pr([p > t for p in oof], [bool(v) for v in y])[0] >= PRECISION), None)
        want = [r["found"][n] for r in rows]
        if threshold is None:
            print(f"D{n}: no threshold reaches precision {PRECISION} out of fold; no learnt reading", file=sys.stderr)
            continue
        if rules is not None:  # the gain where it is used: only where the rules read a claim and found nothing
            base = [r[n] for r in rules]
            comb = [r[n] or (r[0] and big and p > threshold) for r, p, big in zip(rules, oof, long_enough)]
            gain = pr(comb, want)[1] - pr(base, want)[1]
            (bp, br), (cp, cr) = pr(base, want), pr(comb, want)
            print(f"D{n}: threshold {threshold:.2f}; out of fold, precision/recall of the rules {bp:.3f}/{br:.3f}, "
                  f"with the learnt reading {cp:.3f}/{cr:.3f}{'' if gain >= 0.01 else ' (no gain: not kept)'}", file=sys.stderr)
            if gain < 0.01:
                continue
        w, b = fit(x, y)
        top = np.argsort(-np.abs(w))[:KEEP]
        out[str(n)] = {"bias": round(float(b), 6), "threshold": round(float(threshold), 2),
                       "weights": {names[k]: round(float(w[k]), 6) for k in sorted(top, key=lambda k: names[k])}}
    return out


def evaluate(model: dict, rows: list[dict], rules: list[dict]) -> None:
    """The held-out texts' precision and recall, rules alone and with the model; "added" counts the texts the model
    turns from missing to found, and how many of those the labels say state the disclosure."""
    print("| Disclosure | labelled found | rules P / R | rules + model P / R | added (stated) |\n|---|---:|---:|---:|---:|")
    for n in range(1, 10):
        want = [r["found"][n] for r in rows]
        base = [r[n] for r in rules]
        m = model.get(str(n))
        comb = list(base)
        if m is not None:
            for i, r in enumerate(rows):
                if rules[i][0] and not base[i] and len(feats := features(r["body"])) >= MIN_FEATURES:
                    comb[i] = probability(m["weights"], m["bias"], feats) > m["threshold"]
        added = [w for b, c, w in zip(base, comb, want) if c and not b]
        (bp, br), (cp, cr) = pr(base, want), pr(comb, want)
        tail = f"{len(added)} ({sum(added)})" if m else "no model kept"
        print(f"| D{n} | {sum(want)} | {bp:.2f} / {br:.2f} | {cp:.2f} / {cr:.2f} | {tail} |")


# ---- the line-level variant (--lines): a model of the lines that state a disclosure -----------------------------


def fit_sparse(rows: list[list[int]], y: np.ndarray, size: int, lam: float = 1e-4, steps: int = 300) -> tuple[np.ndarray, float]:
    """``fit`` for many short rows (feature indices), classes weighted to balance; bincount instead of a dense matrix."""
    counts = np.array([len(r) for r in rows])
    idx = np.array([k for r in rows for k in r], np.int64)
    row_of = np.repeat(np.arange(len(rows)), counts)
    val = (1 / np.sqrt(np.maximum(1, counts)))[row_of]
    weight = np.where(y > 0, len(y) / max(1, 2 * y.sum()), len(y) / max(1, 2 * (len(y) - y.sum())))
    w, b = np.zeros(size), 0.0
    m, v = np.zeros(size), np.zeros(size)
    for t in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(np.bincount(row_of, weights=w[idx] * val, minlength=len(rows)) + b)))
        r = (p - y) * weight / len(y)
        g = np.bincount(idx, weights=r[row_of] * val, minlength=size) + lam * w
        b -= RATE * float(r.sum())
        adam_step(w, g, m, v, t)
    return w, b


def line_model(rows: list[dict], rules: list[dict], n: int) -> dict:
    """Positives: the lines where the rules read disclosure ``n`` in a text that says it; negatives: every line of a
    text that does not state it. (The lines of a text that says it where the rules read nothing are left out.)"""
    feats, y = [], []
    for r, rule in zip(rows, rules):
        if r["said"][n] and rule["ev"][n]:
            picked = [(features(r["lines"][i]), 1) for i in rule["ev"][n] if 0 <= i < len(r["lines"])]
        elif not r["found"][n]:
            picked = [(features(line), 0) for line in r["lines"]]
        else:
            continue
        for fs, label in picked:
            if fs:
                feats.append(fs)
                y.append(label)
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    vocab = {f: k for k, f in enumerate(sorted(f for f, c in df.items() if c >= 2))}
    w, b = fit_sparse([[vocab[f] for f in fs if f in vocab] for fs in feats], np.array(y, float), len(vocab))
    return {"bias": b, "weights": {f: float(w[k]) for f, k in vocab.items()}}


def best_line(model: dict, lines: list[str]) -> float:
    """The highest line probability (a line scored alone, every feature of it counted)."""
    return max((probability(model["weights"], model["bias"], features(line)) for line in lines if line.strip()), default=0.0)


def lines_mode(rows: list[dict], rules: list[dict], test: list[dict], test_rules: list[dict]) -> None:
    print("\nLine model: rules + model P / R and added (stated) at each threshold; probe: the best line's probability")
    for n in (1, 2, 3, 6):
        model = line_model(rows, rules, n)
        want = [r["found"][n] for r in test]
        base = [rule[n] for rule in test_rules]
        scores = {i: best_line(model, r["lines"]) for i, (r, rule) in enumerate(zip(test, test_rules)) if rule[0] and not base[i]}
        cells = []
        for t in (0.9, 0.95, 0.98):
            comb = [b or scores.get(i, 0.0) > t for i, b in enumerate(base)]
            added = [want[i] for i, p in scores.items() if p > t]
            cells.append(f"{t}: {pr(comb, want)[0]:.2f} / {pr(comb, want)[1]:.2f}, {len(added)} ({sum(added)})")
        full, cut = (best_line(model, t.splitlines()) for t in probe_cards(n))
        print(f"D{n} rules {pr(base, want)[0]:.2f} / {pr(base, want)[1]:.2f} | " + " | ".join(cells) +
              f" | probe complete {full:.2f}, line deleted {cut:.2f}")


# the probe's card: every disclosure stated, one line each (examples/cards/KLD332 with a complete runtime)
PROBE = ROOT / "examples" / "cards" / "KLD332-prose-runtime-incomplete.md"
PROBE_LINES = {
    1: "Reference: Qwen/Qwen3-8B",
    2: "Both models ran in",
    3: "- Evaluation text:",
    6: "- Positions:",
}


def probe_cards(n: int) -> tuple[str, str]:
    """The complete card, and the same card without disclosure ``n``'s only line (bodies)."""
    text = PROBE.read_text(encoding="utf-8").replace(
        "Both models ran in llama.cpp on an AMD EPYC 7763 (CPU backend, 16 threads).",
        "Both models ran in llama-cpp-python 0.3.16 (llama.cpp b6510, CPU backend, AMD EPYC 7763, 16 threads).")
    cut = "".join(line for line in text.splitlines(keepends=True) if not line.startswith(PROBE_LINES[n]))
    return text, cut


def probe(model: dict) -> None:
    print("\nProbe: the model's probability on a complete card, and with the disclosure's only line deleted")
    print("| Disclosure | threshold | complete card | line deleted | rules on the deleted card |\n|---|---:|---:|---:|---|")
    for n, m in sorted(model.items()):
        cards = [parse_card(t.encode(), "README.md") for t in probe_cards(int(n))]
        p = [probability(m["weights"], m["bias"], features("\n".join(scan(c.body, c.body_line).lines))) for c in cards]
        rules = analyse(cards[1]).status(int(n))
        print(f"| D{n} | {m['threshold']:.2f} | {p[0]:.2f} | {p[1]:.2f} | {rules} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hold-out", required=True, help="comma-separated splits to leave out of training and score")
    ap.add_argument("--lines", action="store_true", help="the line-level variant instead (a threshold sweep, not a measurement)")
    args = ap.parse_args()
    hold = {s for s in args.hold_out.split(",") if s}
    every = texts()
    rows = [r for r in every if r["split"] not in hold]
    test = [r for r in every if r["split"] in hold]
    print(f"training on {len(rows)} labelled KLD texts (held out: {sorted(hold)})", file=sys.stderr)
    rules, test_rules = rule_found(rows), rule_found(test)
    if args.lines:
        lines_mode(rows, rules, test, test_rules)
        return 0
    model = train(rows, rules)
    evaluate(model, test, test_rules)
    probe(model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
