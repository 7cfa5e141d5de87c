"""Print the polynomial kldcard/kernel.py uses for expm1 on |r| <= ln2/2, and its error.

expm1(r) = r + r²·P(r), with P the degree-9 Chebyshev interpolant of (expm1(r) − r)/r² (near
minimax). Rounded to doubles, the relative error of r + r²·P(r) is ~4e-17 (0.2 ulp) before the
rounding of the evaluation itself. Run: ``python scripts/exp_coefficients.py`` (needs mpmath).
"""

from __future__ import annotations

import mpmath as mp


def main(degree: int = 9) -> None:
    mp.mp.dps = 50
    a = mp.log(2) / 2

    def p(r):
        return (mp.expm1(r) - r) / r**2 if r else mp.mpf(1) / 2

    coeffs = [mp.mpf(float(c)) for c in mp.chebyfit(p, [-a, a], degree + 1)]
    worst = max(abs((r + r**2 * mp.polyval(coeffs, r)) / mp.expm1(r) - 1)
                for r in (-a + 2 * a * i / 4000 for i in range(4001)) if r)
    print("highest degree first:")
    for c in coeffs:
        print(f"    {float(c)!r}")
    print(f"max relative error of r + r^2 P(r) with double coefficients: {mp.nstr(worst, 3)}")


if __name__ == "__main__":
    main()
