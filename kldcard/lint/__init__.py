"""The card linter: rule registry, structured checker (the ``kld_evaluation`` block), prose checker
(free-form claims), reporters and configuration.

Owns every rule code and its documentation. May import: errors, files, schema, card, and the numpy-free
parts of stack (splits, portability). Never numpy, numba, an engine, capture, compare or render: a
base install lints cards, fast (an import-linter contract in pyproject.toml enforces it).
"""
