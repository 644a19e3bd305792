"""The vocabulary every layer shares: errors and exit codes, records, the JSON shapes, text and terminal rules.

Each module here imports nothing above the store, so any layer may import it.
"""
