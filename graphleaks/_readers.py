"""Suffix-keyed tables of file readers: one table per input kind, one entry per format.

Every input kind graphleaks reads (graphs, feature matrices, models, node-id files, score
files, embeddings) has one :class:`ReaderTable`. A caller never tests ``path.suffix``
itself: it asks the table, which picks the reader by suffix, or refuses an unknown suffix
with one line that lists the formats it knows. Adding a format is one reader function and
one :meth:`ReaderTable.register` call, and the contract test
(``tests/contracts/test_reader_contract.py``) enumerates the tables, so a new entry is
checked against forged files and round trips without being named anywhere else.

A table may name a *fallback* reader for any suffix it does not list (line-oriented text
tables are read whatever their file name ends in, as they always were); a table without one
refuses unknown suffixes.

Example:
    >>> table: ReaderTable[str] = ReaderTable("greeting file", option="--greeting")
    >>> table.register("txt", (".txt",), lambda p: "hi", "plain text")
    >>> table.reader("hello.TXT").name
    'txt'
    >>> table.reader("hello.bin")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphleaks.errors.DataError: --greeting hello.bin: unknown format .bin; known formats: ...
    >>> table.describe()
    '.txt (plain text)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from graphleaks.errors import DataError, GraphleaksError

T = TypeVar("T")


@dataclass(frozen=True)
class Reader(Generic[T]):
    """One file format of a table.

    Attributes:
        name: Short name of the format (``npy``, ``csv``); unique in its table.
        suffixes: Lower-case suffixes it is chosen for (``(".csv", ".tsv")``); empty for a
            fallback reader that only takes unlisted suffixes.
        read: ``read(path, **options)``: the reader; raises :class:`DataError` (one line,
            never quoting the file) for a file it cannot read.
        description: One phrase for help texts and refusals (``"numpy array, no pickle"``).
    """

    name: str
    suffixes: tuple[str, ...]
    read: Callable[..., T]
    description: str


class ReaderTable(Generic[T]):
    """Maps file suffixes to the :class:`Reader` of each format of one input kind.

    Args:
        what: The input kind, for messages (``"node-id file"``).
        option: The command-line option that takes such a file, for messages (``--model``).
        error: Error class of the unknown-suffix refusal (default :class:`DataError`).
    """

    def __init__(self, what: str, *, option: str | None = None,
                 error: type[GraphleaksError] = DataError) -> None:
        self.what = what
        self.option = option
        self.error = error
        self._readers: dict[str, Reader[T]] = {}
        self._by_suffix: dict[str, str] = {}
        self._fallback: str | None = None

    def register(self, name: str, suffixes: tuple[str, ...], read: Callable[..., T],
                 description: str, *, fallback: bool = False) -> None:
        """Add a format; ``fallback`` makes it read every suffix no other entry lists.

        Raises:
            RuntimeError: For a name or suffix already taken, or a second fallback (a
                programming error, found when the module is imported).
        """
        if name in self._readers:
            raise RuntimeError(f"{self.what} reader {name!r} is registered twice")
        for s in suffixes:
            if not s.startswith(".") or s != s.lower():
                raise RuntimeError(f"{self.what} suffix {s!r} must be lower case with a dot")
            if s in self._by_suffix:
                raise RuntimeError(f"{self.what} suffix {s} already belongs to "
                                   f"{self._by_suffix[s]!r}")
        if fallback and self._fallback is not None:
            raise RuntimeError(f"{self.what} table already has the fallback "
                               f"{self._fallback!r}")
        if not suffixes and not fallback:
            raise RuntimeError(f"{self.what} reader {name!r} needs a suffix or fallback=True")
        self._readers[name] = Reader(name, tuple(suffixes), read, description)
        self._by_suffix.update(dict.fromkeys(suffixes, name))
        if fallback:
            self._fallback = name

    @property
    def fallback(self) -> Reader[T] | None:
        """The reader of unlisted suffixes, if any."""
        return None if self._fallback is None else self._readers[self._fallback]

    def suffixes(self) -> tuple[str, ...]:
        """Every listed suffix, in registration order."""
        return tuple(self._by_suffix)

    def describe(self) -> str:
        """The formats on one line: ``.npy (numpy array), any other suffix (text table)``."""
        parts = [f"{'/'.join(r.suffixes)} ({r.description})" for r in self if r.suffixes]
        if self.fallback is not None:
            parts.append(f"any other suffix ({self.fallback.description})")
        return ", ".join(parts)

    def reader(self, path: str | Path) -> Reader[T]:
        """The reader for ``path``'s suffix (case-insensitive).

        Raises:
            DataError: (or the table's ``error`` class) for a suffix no entry lists, in a
                table without a fallback, naming the known suffixes.
        """
        p = Path(path)
        suffix = p.suffix.lower()
        name = self._by_suffix.get(suffix, self._fallback)
        if name is None:
            where = f"{self.option} {p}" if self.option else f"{self.what} {p}"
            raise self.error(f"{where}: unknown format {suffix or '(no suffix)'}; known "
                             f"formats: {self.describe()}")
        return self._readers[name]

    def read(self, path: str | Path, **options: object) -> T:
        """Read ``path`` with the reader its suffix selects."""
        return self.reader(path).read(Path(path), **options)

    def __iter__(self) -> Iterator[Reader[T]]:
        return iter(tuple(self._readers.values()))

    def __len__(self) -> int:
        return len(self._readers)

    def __repr__(self) -> str:
        return f"ReaderTable({self.what!r}: {', '.join(self._readers)})"
