"""Reading a store: recordings, scorings, run selection, exports and replay scripts.

Readers work while a writer writes (WAL on SQLite). May import ``backends``,
``write`` (the label rows) and the store's records.
"""
