"""The name of the directory that holds a project's state, defined once for the whole store (a leaf:
paths.py, locks.py and changes.py all need it, and paths.py sits above the other two)."""

ROOMS = ".rooms"
