"""The store seam: where a store lives, its two back ends (SQLite, PostgreSQL), migrations.

One reader and one writer interface over the same SQL (:mod:`.dialect`);
opening, checking and migrating a store; what a storage failure means. May
import only the store's records (``errors``, ``stop_reasons``).
"""
