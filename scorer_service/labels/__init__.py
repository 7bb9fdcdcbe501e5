"""Human labels and agreement: checked labels, label files, Cohen's κ, judge vs labels.

May import the ledger and the signal names.
"""
