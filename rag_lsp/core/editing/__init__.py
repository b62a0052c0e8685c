"""What an editor asks while a file is written: completion, hover, navigation, and
suggestions from the workspace's index.
"""
