"""Files in and out: the one output policy, the one atomic writer, its one error mapping, and the one reader.

Every file kldcard writes (results, reports, cards, plots, baselines) goes through :func:`atomic_path`
or :func:`write_atomic`: a temporary sibling, fsync, then ``os.replace``, so an error, Ctrl-C or kill
never leaves half a file and never loses the old one. Any OSError on the way becomes one
:class:`~kldcard.errors.InputError` line (exit 2) naming the path. Capture directories and llama.cpp
base files are written incrementally and finalise the same way in their own writers.

The output policy, the same for every writer:

- a target that is one of the run's inputs (same device and inode, so also through a symlink or a
  hard link) is refused before anything is written (:func:`check_output_file`, which commands call
  with their inputs while validating options);
- only a regular file (or a new name) is replaced: a FIFO, device or socket is refused, and ``-``
  means stdout only where an option says so;
- a symlink is followed and its *target* replaced, so the link stays a link;
- the replaced file keeps its permission bits; a new one gets the umask's (not mkstemp's 0600);
- a text file that began with a UTF-8 byte-order mark keeps it;
- a temporary file left by a killed run (our naming pattern, its process gone) is removed by the
  next write next to it.

The package: :mod:`~kldcard.files.reading` (what a path names, and reading it: regular files only),
:mod:`~kldcard.files.parsing` (JSON and TOML within bounds) and :mod:`~kldcard.files.output` (the
output policy and the atomic writer); every name imports from ``kldcard.files``. May import: errors.
"""

from __future__ import annotations

from kldcard.files.output import (
    BOM,
    atomic_path,
    check_output_dir,
    check_output_file,
    fsync_dir,
    keep_bom,
    output_errors,
    write_atomic,
)
from kldcard.files.parsing import MAX_NESTING, loads_json, loads_toml
from kldcard.files.reading import decode_utf8, is_file, read_bytes, read_text, regular_file, sha256_file

__all__ = ["BOM", "MAX_NESTING", "atomic_path", "check_output_dir", "check_output_file", "decode_utf8", "fsync_dir", "is_file", "keep_bom",
           "loads_json", "loads_toml", "output_errors", "read_bytes", "read_text", "regular_file", "sha256_file",
           "write_atomic"]
