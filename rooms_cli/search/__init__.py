"""`rooms search`: one ranked full-text search over chat transcripts, inboxes, tasks, group broadcasts and
memories (docs/search.md).

    query.py      what people type (`words`, `"a phrase"`, `prefix*`, `-word`, `OR`) → an FTS5 query
    documents.py  which record of which log is a searchable document, and what a hit shows of it
    refresh.py    the index kept up to date from what each log appended since the last search
    engine.py     `search(project, query, …)`: refresh, match, rank, check each hit against its log

The index itself (an SQLite FTS5 file under `.rooms/run/search/`) is store/ftsindex.py: derived, local,
rebuilt whenever it is missing, damaged or foreign, never trusted over the logs.
"""

FAMILIES = ("chat", "messages", "tasks", "groups", "memories")  # what `--in` names (documents.py says what each holds)
