"""KL terms written as metric keys: the snake-case names logs, dashboards, JSON and docstrings print beside a
value ("kl_div 0.1889", "kld_gemma4_q8 0.509", "med_KLD 0.076", "kld_mean 0.0133"). A key is a KL term when one
of its underscore-separated parts is ``kld`` (or the whole key is ``kl_div``/``kl_divergence``) and no part says
it is a training setting or a bound (``kl_loss``, ``kld_weight``, ``target_kld``, ``kld_threshold``). Not a
command-line option (``--max_kl_div=3e-3`` is a threshold the tool is given), a file name (``kld_results.csv``)
or a call (``F.kl_div(``). Samples in tests/test_lint_claim_detection.py; joined into claims_patterns.KLD_TERM.

RL and engine-parity logs name the measured KL with a bare ``kl`` part ("k3_kl: 3.4e-4", "mismatch_kl 0.024",
"train/gen_kl_error", "train_rollout_kl", "kl_mean"): keys of several authors' trainers (NeMo-RL, prime-rl, verl,
xtuner, miles). Such a part counts written in lower case only, as logs print keys: an upper-case ``IQ2_KL`` is a
quant type and ``KL_REFERENCE_BUILD_SPREAD`` a constant; a key whose first part is a quant type (``iq2_kl``) is
none either. A loss or a setting of the trainer stays out by the same parts as above (``kl_coef``, ``use_kl_loss``,
``kl_ctrl``, ``kl_estimator``)."""

from __future__ import annotations

# parts that make a key a training setting, a bound or a file, not a measured value
_NOT_MEASURED = (
    r"loss|weight|coef|coeff|beta|alpha|lambda|penalty|target|threshold|thresh|gate|limit|budget|tol|max|cap|file|path|dir|base"
    r"|ctl|ctrl|type|estimator|horizon|clip|schedule|use|init|test|tests|utils|corpus|config|cfg"  # trainer settings, modules
    # PPO's step size between the policy and its previous iterate, as stable-baselines3, CleanRL and TRL log it
    # ("train/approx_kl", "approx_kl 0.0421"): a training metric, not a measured model-to-model divergence
    r"|approx"
)
_PART = r"[A-Za-z0-9]+"
_KEY_PART = rf"(?!(?:{_NOT_MEASURED})(?![A-Za-z0-9])){_PART}"
_BARE_KL = rf"(?:(?:{_KEY_PART}_)*(?-i:kl)(?:_{_KEY_PART})+|(?:{_KEY_PART}_)+(?-i:kl))"
# regular-expression text (case-insensitive, ASCII: KLD_TERM's flags)
METRIC_KEY = (
    rf"(?<![\w.-])(?:kl_div(?:ergence)?(?![\w.(-])"
    rf"|(?:{_KEY_PART}_)*kld(?:_{_KEY_PART})+(?![\w.(-])"
    rf"|(?:{_KEY_PART}_)+kld(?![\w.(-])"
    # a lower-case "kl" part ("k3_kl", "gen_kl_error", "kl_mean"); not after a quant type's part ("iq2_kl"), nor
    # a folder ("results/kl_out/")
    rf"|(?![iI]?[qQ]\d){_BARE_KL}(?![\w.(/-]))"
)
