"""The card linter: rule registry, structured checker, prose checker and reporters."""
