"""The command line: a thin layer that parses options, builds library objects, runs them and exits.

One module per command (registered in :data:`kldcard.cli.main.COMMANDS`), shared option groups in
their own modules. No logic a library user would need lives here. Top of the stack: may import every
package; ``kldcard lint`` imports only :mod:`kldcard.cli.lint` and the linter.
"""
