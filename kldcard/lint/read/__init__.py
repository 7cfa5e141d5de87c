"""The recognisers of the prose reader (:mod:`kldcard.lint.reader`): small modules of data, each
with real samples in its test (STYLE 20): numbers as people write them, KL terms in the languages
cards are written in, the values each disclosure's evidence carries, the front-matter keys the Hub
defines, and what "complete" means per disclosure."""
