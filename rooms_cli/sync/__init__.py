"""`rooms sync`: `.rooms/` through a git remote (the merge itself is store/gitsync.py; docs/git.md)."""
