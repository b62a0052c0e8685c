"""Long runs against the language server and the command line: each module is a
command of its own (``python tests/soak/<module>.py --help``) and has a short
version in the test suite that imports it from here."""
