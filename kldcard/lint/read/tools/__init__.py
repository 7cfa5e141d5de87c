"""What the tools that print KLD print, one small grammar per tool (STYLE 20): the lines that carry
its numbers, and the labels that name it unmistakably. Each module's real samples (printed output
kept as printed) are in tests/test_lint_read_tools.py. The claim finder
(:mod:`kldcard.lint.claims`) reads their lines; :mod:`kldcard.lint.tool_defaults` names the tool
from them and infers its documented defaults."""
