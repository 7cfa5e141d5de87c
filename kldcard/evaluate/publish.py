"""``--push REPO``: the card, its plot and sidecar files in one huggingface_hub commit.

:func:`commit_operations` builds the ``CommitOperationAdd`` list (path in the repo = path relative
to the card's directory); :func:`describe` is what ``--dry-run`` prints; :func:`push` sends them
with ``HfApi.create_commit`` (one commit, optionally a pull request). Only :func:`push` touches the
network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kldcard.errors import InputError, MissingExtra

__all__ = ["commit_operations", "describe", "push"]


def _hub():
    try:
        import huggingface_hub
    except ImportError:
        raise MissingExtra("huggingface_hub", "hf") from None
    return huggingface_hub


def commit_operations(card: Path, extra: list[Path]) -> list[Any]:
    """One ``CommitOperationAdd`` per file: the card as ``README.md``, the others at their path
    relative to the card's directory (a file outside it goes to the repo root under its name)."""
    hub = _hub()
    card = Path(card)
    if not card.is_file():
        raise InputError(f"{card}: no card to push")
    ops = [hub.CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=str(card))]
    root = card.resolve().parent
    for f in extra:
        f = Path(f).resolve()
        if not f.is_file():
            raise InputError(f"{f}: not a file; nothing to push")
        rel = f.relative_to(root).as_posix() if f.is_relative_to(root) else f.name
        ops.append(hub.CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(f)))
    return ops


def describe(repo: str, ops: list[Any], *, create_pr: bool = False) -> list[str]:
    """The lines ``--dry-run`` prints: one commit to ``repo`` and every file it adds."""
    lines = [f"one commit to {repo}" + (" (as a pull request)" if create_pr else "") + f": {len(ops)} file(s)"]
    for op in ops:
        size = Path(op.path_or_fileobj).stat().st_size
        lines.append(f"  add {op.path_in_repo} <- {op.path_or_fileobj} ({size:,} bytes)")
    return lines


def push(repo: str, ops: list[Any], *, create_pr: bool = False, message: str = "KLD evaluation (kldcard evaluate)") -> str:
    """Create the commit; returns its URL (or the pull request's)."""
    hub = _hub()
    info = hub.HfApi().create_commit(repo_id=repo, operations=ops, commit_message=message, create_pr=create_pr)
    return str(info.pr_url or info.commit_url)


def hub_files_spec(spec: str, text_source: Any) -> tuple[str, str]:
    """``--hub-files DATASET_ID:TASK_ID`` checked before anything runs or is written: (dataset id,
    task id), or one InputError line. ``text_source`` is the project's evaluation-text source."""
    _hub()
    dataset_id, _, task_id = spec.rpartition(":")
    if "/" not in dataset_id or not task_id:
        raise InputError(f"--hub-files needs a registered benchmark dataset id (owner/name) and a task id, "
                         f"not {dataset_id!r}:{task_id!r}")
    dataset = text_source.get("dataset") if isinstance(text_source, dict) else getattr(text_source, "dataset", None)
    if dataset != dataset_id:
        raise InputError(f"--hub-files {dataset_id}: the evaluation text's source is not that dataset "
                         f"({dataset or 'a URL or repo file'}); a score on another text "
                         "is not a score on that benchmark")
    return dataset_id, task_id


def eval_results_files(evaluation: Any, dataset_id: str, task_id: str) -> dict[str, bytes]:
    """``.eval_results/*.yaml`` entries (the Hub's newer format, huggingface_hub's ``EvalResultEntry``):
    one file per candidate with its mean forward KL(P_ref ‖ P_cand) in nats, for a benchmark dataset
    and task the user names. Never invents what the Hub checks: no ``verifyToken``; the dataset must
    be the evaluation text's own (a text from elsewhere is not a score on that benchmark)."""
    import yaml

    hub = _hub()
    src = evaluation.evaluation_text.source
    hub_files_spec(f"{dataset_id}:{task_id}", src)
    files = {}
    ref = evaluation.reference
    for c in evaluation.candidates:
        entry = hub.EvalResultEntry(
            dataset_id=dataset_id, task_id=task_id, value=float(c.results.kld.mean),
            dataset_revision=getattr(src, "revision", None),
            notes=(f"{c.name}: mean KL(P_ref || P_cand) in nats against {ref.model} ({ref.dtype}), "
                   f"n_ctx {evaluation.context.n_ctx}, positions {evaluation.positions.scheme}; kldcard"),
        )
        text = yaml.safe_dump(hub.eval_result_entries_to_yaml([entry]), sort_keys=False)
        files[f".eval_results/kld-{c.name}.yaml"] = text.encode("utf-8")
    return files
