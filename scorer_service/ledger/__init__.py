"""The score ledger read back: scorings, aggregation per run and domain, pass^k, reasons.

May import ``heard``, ``timing`` and the signal names; never scoring itself,
so the report, the gate and comparison read scores without the scorers.
"""
