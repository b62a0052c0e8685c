"""The workspace and its facts across files: settings, the settings file, its files and
the index of their paths, suites and targets as other files see them, manifests,
dataset rows and their shapes, what a case expects, and the options of targets and engines.
"""
