"""Reports: the audit report's records and codec, its writers, verdict and CI gate.

A wing beside :mod:`graphleaks.audit`, below it: reading, rendering and gating a report
needs no audit runner. :mod:`.records` and :mod:`.report` decode a ``report.json`` without
torch; :mod:`.markdown`, :mod:`.html`, :mod:`.writers` render it; :mod:`.verdict` grades it;
:mod:`.gates` and :mod:`.regression` check it against thresholds and a baseline, and
:mod:`.junit` writes that check for CI; :mod:`.scores` holds the per-candidate score tables.
"""
