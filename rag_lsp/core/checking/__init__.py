"""Checking: the one way in (analysis), the one-shot analysis and the dataset model that
re-checks in proportion to each edit, the contexts each rule scope is given, the rules
(one file per code), the seam of rules over a whole dataset, and folding.
"""
