"""Reading files and text with positions: sources, YAML, JSON rows and TOML with spans,
positions, paths in normal form, JSON Schema validation, and the findings a check reports.
"""
