"""Runs: which suites, the runner, the targets it asks, the scorer and the engines, the
report, comparisons, slices and history, recording, and importing datasets of other tools.
"""
