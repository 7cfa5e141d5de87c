"""Train the learnt second reading (:mod:`kldcard.lint.read.learnt`) on the labelled corpus (a development tool).

``python scripts/train_reader.py`` trains one L2-regularised logistic regression per disclosure on every
labelled KLD-claiming text under ``tests/data`` (the invented corpus, the real development set and every
real holdout), picks each disclosure's threshold on 5-fold out-of-fold predictions (the lowest at which
the model alone reaches a precision of 0.90 on texts that say it), keeps the disclosures where the model, used only where the
rules find nothing, adds recall out of fold, and writes ``kldcard/lint/read/learnt_weights.json``
(atomically) with the digest of the texts and labels it learnt from (``tests/test_learnt_reading.py``
checks the digest, so a changed label or card asks for a retraining).

``--hold-out SPLIT,SPLIT --evaluate`` trains without those splits and prints, on them, the rules alone
and the rules with the learnt reading side by side (how issue 28's transfer figures were measured); it
writes nothing. Needs numpy (installed with the test dependencies); the linter itself scores in pure Python.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import helpers_prose as corpus  # noqa: E402  (the labelled corpus's reader: tests/helpers_prose.py)

from kldcard.card.document import read_card  # noqa: E402
from kldcard.files import write_atomic  # noqa: E402
from kldcard.lint.markdown import scan  # noqa: E402
from kldcard.lint.read import learnt  # noqa: E402
from kldcard.lint.read.complete import CAN_BE_INCOMPLETE  # noqa: E402

PRECISION = 0.90  # the model alone, out of fold, at the threshold
MIN_DF = 3  # a feature seen in fewer training texts is dropped
KEEP = 3000  # largest weights kept per disclosure (the file stays small; the rest move no decision)
FOLDS = 5
LAMBDA, STEPS, RATE = 1e-3, 400, 0.05


def texts(hold_out: set[str]) -> list[dict]:
    out = []
    for name, lab in sorted(corpus.labels().items()):
        if not lab["claims"] or lab["split"] in hold_out:
            continue
        card = read_card(corpus.path(name))
        partial = set(lab.get("incomplete") or ())
        found = {n: lab["D"][n] != "M" or n in partial for n in range(1, 10)}  # as the corpus is scored
        # what the model learns: the text *says* it (an I label comes from a tool's defaults, which the
        # rules already infer; learning it would teach "Mean KLD" -> positions stated)
        said = {n: lab["D"][n] == "S" or n in partial for n in range(1, 10)}
        body = "\n".join(scan(card.body, card.body_line).lines)
        out.append({"name": name, "split": lab["split"], "body": body, "found": found, "said": said})
    return out


def digest(rows: list[dict]) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update(json.dumps([r["name"], sorted(r["found"].items()), sorted(r["said"].items()), r["body"]]).encode())
    return h.hexdigest()


def matrix(feats: list[set[str]], vocab: dict[str, int]) -> np.ndarray:
    x = np.zeros((len(feats), len(vocab)), np.float32)
    for i, fs in enumerate(feats):
        for f in fs:
            k = vocab.get(f)
            if k is not None:
                x[i, k] = 1
        x[i] /= np.sqrt(max(1, len(fs)))  # learnt.probability's normalisation: every feature of the text counts
    return x


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Adam on the mean log-loss plus LAMBDA/2 |w|^2; deterministic (no sampling)."""
    w = np.zeros(x.shape[1], np.float32)
    b = 0.0
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, STEPS + 1):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = x.T @ (p - y) / len(y) + LAMBDA * w
        b -= RATE * float((p - y).mean())
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= RATE * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w, b


def pr(got: list[bool], want: list[bool]) -> tuple[float, float]:
    tp = sum(g and w for g, w in zip(got, want))
    fp = sum(g and not w for g, w in zip(got, want))
    fn = sum(w and not g for g, w in zip(got, want))
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)


def rule_found(rows: list[dict]) -> list[dict[int, bool]]:
    """The rules' reading of each text (found = not missing), and whether any claim was read."""
    out = []
    for r in rows:
        rep = corpus.report(r["name"], learnt=False)
        got = corpus.statuses(rep)
        out.append({n: got[n] != "M" for n in range(1, 10)} | {0: bool(rep.readings)})
    return out


def train(rows: list[dict], rules: list[dict[int, bool]] | None = None) -> dict:
    feats = [learnt.features(r["body"]) for r in rows]
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    names = sorted(f for f, c in df.items() if c >= MIN_DF)
    vocab = {f: k for k, f in enumerate(names)}
    x = matrix(feats, vocab)
    long_enough = [len(fs) >= learnt.MIN_FEATURES for fs in feats]  # learnt.suggest reads no shorter body
    folds = np.arange(len(rows)) % FOLDS
    out = {}
    for n in CAN_BE_INCOMPLETE:  # a learnt reading is an incomplete one (KLD33n); D7 and D8 have none
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


def evaluate(model: dict, rows: list[dict], rules: list[dict[int, bool]]) -> None:
    print("| Disclosure | labelled found | rules P / R | with learnt reading P / R |\n|---|---:|---:|---:|")
    for n in range(1, 10):
        want = [r["found"][n] for r in rows]
        base = [r[n] for r in rules]
        m = model.get(str(n))
        comb = list(base)
        if m is not None:
            for i, r in enumerate(rows):
                if rules[i][0] and not base[i] and len(learnt.features(r["body"])) >= learnt.MIN_FEATURES:
                    comb[i] = learnt.probability(m["weights"], m["bias"], learnt.features(r["body"])) > m["threshold"]
        (bp, br), (cp, cr) = pr(base, want), pr(comb, want)
        print(f"| D{n} | {sum(want)} | {bp:.2f} / {br:.2f} | {cp:.2f} / {cr:.2f}{'' if m else ' (no learnt reading)'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hold-out", default="", help="comma-separated splits to leave out of training")
    ap.add_argument("--evaluate", action="store_true", help="print the held-out splits' scores; write nothing")
    args = ap.parse_args()
    hold = {s for s in args.hold_out.split(",") if s}
    rows = texts(hold)
    print(f"training on {len(rows)} labelled KLD texts (held out: {sorted(hold) or 'none'})", file=sys.stderr)
    model = train(rows, rule_found(rows))
    if args.evaluate:
        test = [r for r in texts(set()) if r["split"] in hold]
        evaluate(model, test, rule_found(test))
        return 0
    data = {"features": learnt.FEATURES, "trained_on": {"texts": len(rows), "digest": digest(rows)}, "disclosures": model}
    write_atomic(learnt.WEIGHTS, (json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n").encode())
    print(f"wrote {learnt.WEIGHTS.relative_to(ROOT)}: learnt readings for {', '.join('D' + n for n in model)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
