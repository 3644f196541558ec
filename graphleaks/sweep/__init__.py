"""Sweeps: a grid of defenses × ε × attacks × seeds, run by the audit and stored in SQLite.

A wing above :mod:`graphleaks.audit` (each unit of a sweep is an audit): :mod:`.sweep`
parses the sweep spec, expands the grid and runs it; :mod:`.results_store` keeps the
rows; :mod:`._ray_backend` runs units on Ray.
"""
