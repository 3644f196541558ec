"""Exceptions raised by graphleaks.

Every error a user can cause by bad input derives from :class:`GraphleaksError` and is
reported by the CLI as one line with exit code 2. The classes also subclass builtins so
that existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations


class GraphleaksError(Exception):
    """Base class of every error caused by the user's input or configuration."""


class InvalidConfigError(GraphleaksError, ValueError, TypeError):
    """A configuration value is outside its allowed range or of the wrong type."""


class DataError(GraphleaksError, ValueError):
    """A dataset, feature file, edge list or split is missing, malformed or inconsistent."""


class BundleError(GraphleaksError, ValueError):
    """A saved model bundle is missing, corrupted, unsafe or does not match its data."""


class CapabilityError(GraphleaksError, ValueError):
    """An attack needs an output or knowledge that the threat model does not grant."""
