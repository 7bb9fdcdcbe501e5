"""Writing a store: the single batched writer per store and process, and the rows it writes.

May import ``backends`` and the store's records; never the readers.
"""
