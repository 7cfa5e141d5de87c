"""The command line: a thin layer that parses options, builds library objects and exits."""
