"""Print the polynomials kldcard/compare/kernel.py uses for expm1 and log1p, with their errors.

- expm1(r) = r + r²·P(r) on |r| <= ln2/2, P the degree-9 Chebyshev interpolant of (expm1(r) − r)/r²;
- log(m) = 2·atanh(s) = 2s + s·z·Q(z), z = s² <= ((√2−1)/(√2+1))², Q the degree-6 Chebyshev
  interpolant of (2·atanh(√z) − 2√z)/z^1.5.

Chebyshev interpolants are near-minimax. The printed error is that of the approximation with the
coefficients rounded to doubles, before the rounding of the evaluation itself.
Run: ``python scripts/kernel_coefficients.py`` (needs mpmath).
"""

from __future__ import annotations

import mpmath as mp


def _fit(f, lo, hi, degree: int, check, points):
    coeffs = [mp.mpf(float(c)) for c in mp.chebyfit(f, [lo, hi], degree + 1)]
    worst = max(check(coeffs, x) for x in points)
    return coeffs, worst


def main() -> None:
    mp.mp.dps = 50
    a = mp.log(2) / 2
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)

    def p(r):
        return (mp.expm1(r) - r) / r**2 if r else mp.mpf(1) / 2

    def q(z):
        return (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / z**1.5 if z else mp.mpf(2) / 3

    rs = [-a + 2 * a * i / 4000 for i in range(4001) if 2 * i != 4000]
    ss = [-smax + 2 * smax * i / 4000 for i in range(4001) if 2 * i != 4000]
    fits = {
        "expm1: P(r), degree 9": _fit(p, -a, a, 9, lambda c, r: abs((r + r**2 * mp.polyval(c, r)) / mp.expm1(r) - 1), rs),
        "log: Q(z), degree 6": _fit(q, 0, smax**2 * mp.mpf("1.0001"), 6,
                                    lambda c, s: abs((2 * s + s**3 * mp.polyval(c, s * s)) / (2 * mp.atanh(s)) - 1), ss),
    }
    for name, (coeffs, worst) in fits.items():
        print(f"{name} (highest degree first), max relative error {mp.nstr(worst, 3)}:")
        for c in coeffs:
            print(f"    {float(c)!r}")


if __name__ == "__main__":
    main()
