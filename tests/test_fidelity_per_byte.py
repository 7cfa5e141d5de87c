"""Fidelity per byte: Pareto standings, dominated candidates named correctly, the card's summary, size
table and chart, the badge, and effective sample sizes that never read larger than n (engine-free)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers_render import candidate, evaluation_dict
from kldcard.card.numbers import fmt_n_eff
from kldcard.compare.pareto import pareto_standing
from kldcard.render.badge import badge_json
from kldcard.render.section import render_section
from kldcard.schema import KldEvaluation


def _size(bits: float, params: int = 40_000_000) -> dict:
    tb = int(bits * params / 8)
    return {"bytes": tb + 4_000_000, "tensor_bytes": tb, "parameters": params, "bits_per_weight": bits,
            "source": "gguf tensor table"}


def _pair(a: str, b: str, diff: float, lo: float, hi: float) -> dict:
    return {"a": a, "b": b, "mean_difference": diff, "ci_low": lo, "ci_high": hi, "distinguishable": lo > 0 or hi < 0}


# A constructed case: Q4_K_M is smaller than Q5_0 and distinguishably closer (Q5_0 is dominated);
# Q5_K_S is smaller than Q6_K with a lower mean, but their paired interval contains 0 (Q6_K is only
# "behind"); Q8_0 is the largest and the closest (front); Q3_K is the smallest (front by definition).
MEANS = {"Q3_K": 0.09, "Q4_K_M": 0.031, "Q5_0": 0.038, "Q5_K_S": 0.0120, "Q6_K": 0.0125, "Q8_0": 0.0014}
BITS = {"Q3_K": 3.9, "Q4_K_M": 4.9, "Q5_0": 5.6, "Q5_K_S": 5.7, "Q6_K": 6.6, "Q8_0": 8.5}
PAIRS = [
    _pair("Q4_K_M", "Q5_0", 0.007, 0.003, 0.011),     # Q5_0 − Q4_K_M > 0: Q4_K_M distinguishably closer
    _pair("Q5_K_S", "Q6_K", 0.0005, -0.0004, 0.0014),  # contains 0
    _pair("Q3_K", "Q4_K_M", -0.059, -0.07, -0.05),     # Q4_K_M closer than Q3_K, but larger: no domination
    _pair("Q8_0", "Q6_K", 0.011, 0.009, 0.013),        # Q8_0 closer, but larger
]


def test_dominated_candidates_are_named_correctly_on_a_constructed_case() -> None:
    st = pareto_standing(BITS, MEANS, [(p["a"], p["b"], p["ci_low"], p["ci_high"]) for p in PAIRS])
    assert {n: s.status for n, s in st.items()} == {
        "Q3_K": "front", "Q4_K_M": "front", "Q5_0": "dominated", "Q5_K_S": "front", "Q6_K": "behind",
        "Q8_0": "front"}
    assert st["Q5_0"].by == ["Q4_K_M"]
    assert st["Q6_K"].by == ["Q5_K_S"]
    assert st["Q5_0"].text() == "dominated by Q4_K_M"
    assert "not distinguishable" in st["Q6_K"].text()


def test_unknown_sizes_and_equal_sizes() -> None:
    st = pareto_standing({"a": None, "b": 4.0, "c": 4.0}, {"a": 0.1, "b": 0.2, "c": 0.1}, [("c", "b", 0.05, 0.15)])
    assert st["a"].status == "no size"
    assert st["b"].status == "behind"  # the same size and distinguishably worse: "smaller" is strict
    assert st["c"].status == "front"


def _evaluation(**over) -> KldEvaluation:
    cands = []
    for name, mean in MEANS.items():
        c = candidate(name, name.lower(), mean, 0.9 if mean > 0.01 else 0.98)
        c["model"]["size"] = _size(BITS[name])
        cands.append(c)
    ranking = [{"rank": i + 1, "name": n, "kld_mean": m, "ci_low": m * 0.9, "ci_high": m * 1.1, "n_eff": 900.0,
                "group": "abcdef"[i], "not_distinguishable_from": ["Q6_K"] if n == "Q5_K_S" else
                ["Q5_K_S"] if n == "Q6_K" else []}
               for i, (n, m) in enumerate(sorted(MEANS.items(), key=lambda kv: kv[1]))]
    comparison = {"method": "block-bootstrap", "level": 0.95, "resamples": 1000, "seed": 0, "ranking": ranking,
                  "pairs": PAIRS}
    return KldEvaluation.model_validate(evaluation_dict(candidates=cands, comparison=comparison, **over))


def test_card_summary_size_table_and_pareto_column() -> None:
    text = render_section(_evaluation(), size_plot="kld_vs_size.png")
    summary = text.split("#### Summary")[1].split("#### What was measured")[0]
    assert "**3 to 5 bits per weight**: best here Q4_K_M (4.90 bits per weight" in summary
    assert "**5 to 7 bits per weight**: best here Q5_K_S" in summary
    assert "not distinguishable from Q6_K" in summary
    assert "**7 to 9 bits per weight**: best here Q8_0" in summary
    assert "Q5_0 is dominated: Q4_K_M is smaller and distinguishably closer" in summary
    assert '"Not distinguishable" means the 95% interval' in summary
    assert text.index("#### Summary") < text.index("| # | Disclosure | Value |")
    table = text.split("#### Size and fidelity")[1]
    assert "| Candidate | Quantization | Bits per weight | File size | Mean KLD | p99 KLD | Pareto |" in table
    assert "| Q5_0 | q5_0 | 5.60 |" in table and "| dominated by Q4_K_M |" in table
    assert "| behind Q5_K_S (not distinguishable) |" in table
    assert "![Mean forward KL(P_ref ‖ P_cand) in nats with its interval, and p99, against bits per weight" in table
    assert "<details>" in text and text.count("<details>") == text.count("</details>")


def test_older_results_without_sizes_still_render() -> None:
    text = render_section(KldEvaluation.model_validate(evaluation_dict()))
    assert "#### Size and fidelity" not in text
    assert "#### Summary" in text and "**Size unknown**: best here" in text


def test_size_chart_png_and_svg(tmp_path: Path) -> None:
    from kldcard.render.fidelity import size_points, standings
    from kldcard.render.size_plot import plot_kld_vs_size

    ev = _evaluation()
    points = size_points(ev, standings(ev))
    assert {p.name for p in points if p.front} == {"Q3_K", "Q4_K_M", "Q5_K_S", "Q8_0"}
    png, svg = plot_kld_vs_size(tmp_path / "kld_vs_size.png", points)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    body = svg.read_text(encoding="utf-8")
    assert body.lstrip().startswith("<?xml") and "<svg" in body
    again = plot_kld_vs_size(tmp_path / "again.png", points)
    assert again[1].read_bytes() == svg.read_bytes()  # no timestamps: reruns are byte-identical


def test_badge_names_the_reference_and_the_interval() -> None:
    data = json.loads(badge_json(_evaluation(), "Q4_K_M"))
    assert data["schemaVersion"] == 1
    assert data["label"] == "KLD vs example/tiny-qwen3"
    assert data["message"].startswith("0.031000 nats [0.029760, 0.032240]") and "(q4_k_m)" in data["message"]


@pytest.mark.parametrize(("n_eff", "n", "text"), [
    (287.4, 305, "287 of 305"),
    (305.0, 305, "305 of 305"),
    (333.2, 305, "305 of 305 (capped at n: the block bootstrap estimates 333, more than n, because neighbouring positions"),
    (float("inf"), 305, "305 of 305 (capped at n: the block bootstrap estimates unbounded,"),
])
def test_effective_sample_size_never_reads_larger_than_n(n_eff: float, n: int, text: str) -> None:
    assert fmt_n_eff(n_eff, n).startswith(text)


def test_card_caps_n_eff_and_says_why() -> None:
    ev = evaluation_dict()
    ev["candidates"][0]["results"]["kld"]["n_eff"] = 1100.0  # of 1022 positions
    ev["candidates"][1]["results"]["kld"]["n_eff"] = 800.0
    text = render_section(KldEvaluation.model_validate(ev))
    assert "1,022 of 1,022 (capped at n" in text and "negative autocorrelation" in text
    assert "800 of 1,022" in text
    assert "1,100 of" not in text


def test_cross_stack_candidate_is_drawn_apart_and_never_on_the_front(tmp_path: Path) -> None:
    from kldcard.render.fidelity import size_points, standings
    from kldcard.render.size_plot import plot_kld_vs_size

    ev = evaluation_dict()
    mlx = candidate("tiny-mlx-4bit", "4bit", 0.0005, 0.99,
                    cross_stack={"coordinates": ["engine"], "reason": "the MLX build is what Mac users run"})
    mlx["model"]["size"] = _size(4.5)
    ev["candidates"][0]["model"]["size"] = _size(8.5)
    ev["candidates"][1]["model"]["size"] = _size(4.5)
    ev["candidates"].append(mlx)
    evaluation = KldEvaluation.model_validate(ev)
    st = standings(evaluation)
    assert "tiny-mlx-4bit" not in st  # its KLD holds the stack difference: not compared for size
    points = {p.name: p for p in size_points(evaluation, st)}
    assert points["tiny-mlx-4bit"].cross_stack and not points["tiny-mlx-4bit"].front
    assert points["tiny-qwen3-Q4_0"].front and points["tiny-qwen3-Q8_0"].front
    text = render_section(evaluation)
    assert "| tiny-mlx-4bit | 4bit | 4.50 |" in text and "| n/a (measured across stacks) |" in text
    svg = plot_kld_vs_size(tmp_path / "s.png", list(points.values()))[1].read_text(encoding="utf-8")
    assert "measured across stacks (not comparable)" in svg


def test_rank_summary_names_the_dominated_candidate() -> None:
    from kldcard.compare.rank import RankResult
    from kldcard.compare.summary import BootstrapOptions

    def entry(rank: int, name: str, mean: float, bits: float, pareto: str, by: list[str]) -> dict:
        return {"rank": rank, "name": name, "mean": mean, "ci_low": mean * 0.9, "ci_high": mean * 1.1, "n_eff": None,
                "group": "ab"[rank - 1], "not_distinguishable_from": [], "bits_per_weight": bits, "bytes": 1000,
                "pareto": pareto, "dominated_by": by}

    rr = RankResult(created_utc="2026-01-01T00:00:00Z", reference_path="ref", n_positions=300,
                    uncertainty_method="block-bootstrap", bootstrap=BootstrapOptions(), pairs=[],
                    ranking=[entry(1, "Q4_K_M", 0.031, 4.9, "front", []),
                             entry(2, "Q5_0", 0.038, 5.6, "dominated", ["Q4_K_M"])])
    lines = "\n".join(rr.summary_lines())
    assert "Q5_0 (5.60 bits per weight) is dominated: Q4_K_M is smaller and distinguishably closer" in lines
    assert "Pareto front (bits per weight vs mean KLD): Q4_K_M" in lines
