"""KL terms written as metric keys: the snake-case names logs, dashboards, JSON and docstrings print beside a
value ("kl_div 0.1889", "kld_gemma4_q8 0.509", "med_KLD 0.076", "kld_mean 0.0133"). A key is a KL term when one
of its underscore-separated parts is ``kld`` (or the whole key is ``kl_div``/``kl_divergence``) and no part says
it is a training setting or a bound (``kl_loss``, ``kld_weight``, ``target_kld``, ``kld_threshold``). Not a
command-line option (``--max_kl_div=3e-3`` is a threshold the tool is given), a file name (``kld_results.csv``)
or a call (``F.kl_div(``). Samples in tests/test_lint_metric_keys.py; joined into claims_patterns.KLD_TERM."""

from __future__ import annotations

# parts that make a key a training setting, a bound or a file, not a measured value
_NOT_MEASURED = r"loss|weight|coef|coeff|beta|alpha|lambda|penalty|target|threshold|thresh|gate|limit|budget|tol|max|cap|file|path|dir|base"
_PART = r"[A-Za-z0-9]+"
_KEY_PART = rf"(?!(?:{_NOT_MEASURED})(?![A-Za-z0-9])){_PART}"
# regular-expression text (case-insensitive, ASCII: KLD_TERM's flags)
METRIC_KEY = (
    rf"(?<![\w.-])(?:kl_div(?:ergence)?(?![\w.(-])"
    rf"|(?:{_KEY_PART}_)*kld(?:_{_KEY_PART})+(?![\w.(-])"
    rf"|(?:{_KEY_PART}_)+kld(?![\w.(-]))"
)
