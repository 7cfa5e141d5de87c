"""Remote cards: ``hf://OWNER/NAME[@REVISION]`` -> a local README.md via huggingface_hub.

Downloads go through ``hf_hub_download`` so the Hub's own cache is used and ``HF_HUB_OFFLINE`` (read
by huggingface_hub at import time) and ``local_files_only`` are honoured. Every failure becomes a
one-line :class:`InputError` that names the fix. huggingface_hub is imported only here, and only
when a remote card is linted.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from dataclasses import dataclass
from pathlib import Path

from kldcard.errors import InputError
from kldcard.files import read_text

SCHEME = "hf://"
_REPO_PART = re.compile(r"^\w(?:[\w\-.]*\w)?$", re.ASCII)  # one part of huggingface_hub's REPO_ID_REGEX
_SPEC = re.compile(r"^hf://(?P<repo>[A-Za-z0-9][\w.\-]*/[\w.\-]+)(?:@(?P<rev>[^\s@]+))?/?$")


@dataclass(frozen=True)
class HubSpec:
    repo_id: str
    revision: str | None

    def __str__(self) -> str:
        return f"{SCHEME}{self.repo_id}" + (f"@{self.revision}" if self.revision else "")


def is_hub_spec(text: str) -> bool:
    return str(text).startswith(SCHEME)


def parse_spec(text: str) -> HubSpec:
    """Parse ``hf://OWNER/NAME[@REVISION]`` (model repos only)."""
    m = _SPEC.match(text)
    if not m or repo_id_problem(m.group("repo")):
        raise InputError(f"{text}: not a Hub card spec; use hf://OWNER/NAME or hf://OWNER/NAME@REVISION")
    return HubSpec(m.group("repo"), m.group("rev"))


def repo_id_problem(repo_id: str) -> str | None:
    """Why ``repo_id`` is not a Hub repo id (``NAME`` or ``OWNER/NAME``), or None. The Hub's own rule
    (``huggingface_hub.utils.validate_repo_id``) when huggingface_hub is installed, else the same
    pattern: one slash at most, [A-Za-z0-9_.-] in each part, no '--' or '..', no '.git' ending, 96
    characters at most."""
    try:
        from huggingface_hub.utils import HFValidationError, validate_repo_id
    except ImportError:  # the lint-only install: the same rule, by hand
        parts = repo_id.split("/")
        ok = (0 < len(parts) <= 2 and len(repo_id) <= 96 and "--" not in repo_id and ".." not in repo_id
              and not repo_id.endswith(".git") and all(_REPO_PART.match(x) for x in parts))
        return None if ok else f"{repo_id!r} is not a Hub repo id (OWNER/NAME)"
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        return f"{repo_id!r} is not a Hub repo id: {str(exc).splitlines()[0]}"
    return None


def check_repo_id(repo_id: str, option: str) -> str:
    """``repo_id`` when it is a Hub repo id, else one InputError line naming ``option``."""
    problem = repo_id_problem(repo_id)
    if problem:
        raise InputError(f"{option}: {problem}")
    return repo_id


def fetch_card(text: str, *, local_files_only: bool = False) -> Path:
    """Local path of the repo's README.md (from the cache when offline or ``local_files_only``)."""
    spec = parse_spec(text)
    path = _download(spec, "README.md", spec.revision, local_files_only)
    if path is None:
        raise InputError(f"{spec}: the repository has no README.md (no model card)")
    return path


def fetch_repo_file(text: str, filename: str, *, revision: str | None, local_files_only: bool = False) -> Path | None:
    """Local path of ``filename`` in the card's repo at ``revision`` (pass the commit the card was read
    at, so both come from one commit), through the same cache; None when the repo has no such file
    there, as the Hub says or as the cache remembers it saying (``.no_exist``). Offline and not cached
    is an :class:`InputError`: nobody can tell whether the file is there."""
    spec = parse_spec(text)
    return _download(spec, filename, revision or spec.revision, local_files_only)


def _download(spec: HubSpec, filename: str, revision: str | None, local_files_only: bool) -> Path | None:
    from huggingface_hub import _CACHED_NO_EXIST, constants, hf_hub_download, try_to_load_from_cache
    from huggingface_hub import errors as hf_errors

    offline = local_files_only or constants.HF_HUB_OFFLINE
    at = f"{spec}" + (f" (at {revision[:12]})" if revision and revision != spec.revision else "")
    try:
        return Path(hf_hub_download(spec.repo_id, filename, revision=revision, local_files_only=local_files_only))
    except hf_errors.GatedRepoError:
        raise InputError(f"{spec}: gated repository; accept its terms on the Hub and log in (hf auth login)") from None
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{spec}: repository not found (or private: log in with `hf auth login`)") from None
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{spec}: revision {revision!r} not found") from None
    except hf_errors.LocalEntryNotFoundError:
        # an earlier online request may have found the file missing at this commit
        if try_to_load_from_cache(spec.repo_id, filename, revision=revision) is _CACHED_NO_EXIST:
            return None
        if offline:
            why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else "--offline was given"
            raise InputError(
                f"{at}: {filename} is not in the local Hugging Face cache and {why}; download it once while online"
            ) from None
        raise InputError(f"{at}: cannot reach the Hugging Face Hub and {filename} is not cached") from None
    except hf_errors.EntryNotFoundError:
        return None
    except hf_errors.HFValidationError as exc:
        raise InputError(f"{spec}: invalid repository id or revision: {str(exc).splitlines()[0]}") from None
    except hf_errors.HfHubHTTPError as exc:
        raise InputError(f"{spec}: Hub request failed: {str(exc).splitlines()[0]}") from None
    except OSError as exc:
        raise InputError(f"{spec}: cannot download {filename}: {exc}") from None


def read_repo_list(path: str | Path) -> list[str]:
    """``hf://`` specs from a ``--repos`` file: one repo id (``OWNER/NAME[@REV]`` or ``hf://...``)
    per line; blank lines and ``#`` comments (whole-line or trailing) are skipped."""
    specs = []
    for n, raw in enumerate(read_text(path, "repo list").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        spec = line if is_hub_spec(line) else SCHEME + line
        try:
            parse_spec(spec)
        except InputError:
            raise InputError(f"{path}:{n}: {line!r} is not a repo id; write OWNER/NAME or OWNER/NAME@REVISION") from None
        specs.append(spec)
    return specs


def snapshot_revision(local: Path) -> str | None:
    """The commit a cached README belongs to (huggingface_hub's ``snapshots/<commit>/README.md``)."""
    parent = local.parent
    return parent.name if parent.parent.name == "snapshots" else None


class CardCache:
    """README files fetched in this run, keyed by (repo, revision asked for) and by the commit they
    resolved to: a repo listed twice, or two revisions naming one commit, is fetched and linted once.
    Across runs huggingface_hub's own cache (keyed by commit) keeps an unchanged card from being
    downloaded again: an unpinned spec costs one metadata request, a pinned ``@COMMIT`` none."""

    def __init__(self, *, local_files_only: bool = False) -> None:
        self.local_files_only = local_files_only
        self._paths: dict[HubSpec, Path] = {}
        self._files: dict[tuple[str, str | None, str], Path | None] = {}
        self.fetches = 0

    def fetch(self, text: str) -> tuple[Path, str | None]:
        spec = parse_spec(text)
        if spec not in self._paths:
            self._paths[spec] = fetch_card(text, local_files_only=self.local_files_only)
            self.fetches += 1
        path = self._paths[spec]
        return path, snapshot_revision(path)

    def fetch_file(self, text: str, filename: str, revision: str | None) -> Path | None:
        """:func:`fetch_repo_file`, once per (repo, commit, file) in this run."""
        key = (parse_spec(text).repo_id, revision, filename)
        if key not in self._files:
            self._files[key] = fetch_repo_file(text, filename, revision=revision, local_files_only=self.local_files_only)
        return self._files[key]
