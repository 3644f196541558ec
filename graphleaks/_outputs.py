"""Output paths that never put other people's files at risk.

graphleaks runs unattended in CI on folders it did not create. The rule here: an output
folder is written as a whole (assembled in a temporary sibling, then renamed into place),
and an existing folder is only ever replaced when it is recognisably a graphleaks output of
the same kind (its marker file says so) and holds nothing but graphleaks' own files. The
working directory, its parents, the home directory and the filesystem root are never
replaced. Every check runs before any training or audit starts, so a bad ``--out`` costs
nothing.

Single output files follow the same rule (:func:`check_output_file`, :func:`publish_files`):
an existing file is replaced only when it starts with the exact generator marker graphleaks
writes at a fixed place in its own structure (never because it merely mentions a word), and
a symbolic link, dangling or not, is never written through or replaced.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphleaks._limits import read_json_bounded
from graphleaks.errors import GraphleaksError, InvalidConfigError


@dataclass(frozen=True)
class OutputKind:
    """A kind of output folder graphleaks writes.

    Attributes:
        what: Human name used in messages ("model bundle").
        marker: The JSON file that identifies the folder.
        field: Key of the marker that must hold ``value``.
        value: The marker's identifying value.
        files: Every file name graphleaks writes into such a folder.
    """

    what: str
    marker: str
    field: str
    value: str
    files: frozenset[str]


BUNDLE = OutputKind("model bundle", "manifest.json", "format", "graphleaks-bundle",
                    frozenset({"manifest.json", "weights.safetensors", "extras.safetensors",
                               "split.json", "graph.safetensors"}))
REPORT = OutputKind("audit report", "report.json", "kind", "graphleaks-audit-report",
                    frozenset({"report.json", "report.md", "report.html", "scores.csv"}))
EMBEDDING_REPORT = OutputKind("embedding audit report", "report.json", "kind",
                              "graphleaks-embedding-audit",
                              frozenset({"report.json", "report.md", "report.html"}))
EMBEDDINGS = OutputKind("embedding folder", "embeddings.json", "method", "",
                        frozenset({"embeddings.npy", "embeddings.txt", "embeddings.json"}))


def _protected(path: Path) -> str | None:
    """Why ``path`` (resolved) may never be an output folder, or None."""
    cwd = Path.cwd().resolve()
    if path == cwd:
        return "it is the working directory"
    if path in cwd.parents:
        return "it is a parent of the working directory"
    home = Path.home().resolve()
    if path == home or path in home.parents:
        return "it is the home directory or one of its parents"
    return None


def _marker_ok(folder: Path, kind: OutputKind) -> bool:
    """Whether ``folder``'s marker file identifies it as ``kind`` (read at most 1 MB)."""
    marker = folder / kind.marker
    if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > (1 << 20):
        return False
    try:
        data = read_json_bounded(marker, str(marker), max_bytes=1 << 20)
    except GraphleaksError:  # unreadable, not JSON, or nested too deep: not ours
        return False
    if not isinstance(data, dict):
        return False
    if kind is EMBEDDINGS:  # embeddings.json carries no format tag; its own fields identify it
        return {"method", "num_nodes", "dimensions"} <= set(data)
    return data.get(kind.field) == kind.value


def _is_own(path: Path, kind: OutputKind) -> bool:
    """Whether ``path`` (inside an output folder of ``kind``) is a file graphleaks wrote.

    Besides the kind's own files, the gate's JUnit XML and Markdown summary and the evidence
    exports (CycloneDX BOM, SARIF log) count when they start with graphleaks' generator head:
    the CI example writes them into the report folder, and a rerun must be able to replace it.
    """
    if path.is_symlink() or not path.is_file():
        return False
    if path.name in kind.files:
        return True
    with path.open("rb") as fh:
        head = fh.read(4096)
    return (is_junit_xml(head) or is_gate_summary(head) or is_cyclonedx_bom(head)
            or is_sarif_log(head))


def _foreign_entry(folder: Path, kind: OutputKind) -> str | None:
    """The first entry of ``folder`` that graphleaks did not write, or None."""
    for entry in sorted(os.listdir(folder)):
        if not _is_own(folder / entry, kind):
            return entry
    return None


def _check_parent(out: Path, flag: str) -> None:
    """The nearest existing ancestor of ``out`` must be a writable folder."""
    anc = out.absolute().parent
    while not anc.exists():
        if anc.is_symlink():  # a dangling link on the way
            break
        anc = anc.parent
    if not anc.is_dir():
        raise InvalidConfigError(f"{flag} {out}: {anc} is not a folder; choose another path")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise InvalidConfigError(f"{flag} {out}: folder {anc} is not writable; choose "
                                 "another path")


def check_output_dir(out: Path, kind: OutputKind, *, overwrite: bool | None = None,
                     flag: str = "--out") -> None:
    """Refuse an output folder graphleaks may not write, before any work starts.

    Args:
        out: The output folder.
        kind: What will be written there.
        overwrite: ``False``: an existing non-empty folder is refused (``--overwrite`` not
            given); ``True`` or ``None``: an existing folder of the same kind is replaced.
        flag: The option name used in messages.

    Raises:
        InvalidConfigError: Naming the folder and what to do instead.
    """
    if out.is_symlink():
        raise InvalidConfigError(f"{flag} {out} is a symbolic link; give a real folder path")
    why = _protected(out.resolve())
    if why:
        raise InvalidConfigError(f"{flag} {out}: refusing to write there, {why}; choose a "
                                 "new folder")
    if not out.exists():
        _check_parent(out, flag)
        return
    if not out.is_dir():
        raise InvalidConfigError(f"{flag} {out} exists and is not a folder; choose another "
                                 "path")
    if not os.listdir(out):
        return
    if not _marker_ok(out, kind):
        raise InvalidConfigError(f"{flag} {out} is not empty and is not a graphleaks "
                                 f"{kind.what}; graphleaks only replaces its own output, "
                                 "choose a new folder")
    foreign = _foreign_entry(out, kind)
    if foreign is not None:
        raise InvalidConfigError(f"{flag} {out} holds {foreign!r}, which graphleaks did not "
                                 "write; move it away or choose a new folder")
    if overwrite is False:
        raise InvalidConfigError(f"{flag} {out} already exists; choose another path or pass "
                                 "--overwrite")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise InvalidConfigError(f"{flag} {out}: folder {out.parent} is not writable")


def publish_dir(out: Path, kind: OutputKind, fill: Callable[[Path], object], *,
                overwrite: bool | None = None, flag: str = "--out") -> Path:
    """Write a whole output folder: ``fill(tmp)`` in a temporary sibling, then rename.

    Readers see either the previous folder or the complete new one, never a mix. An
    existing folder is checked again (it may have changed while the work ran) and only its
    own files are removed.

    Args:
        out: The destination folder.
        kind: What is written (decides what may be replaced).
        fill: Writes every file into the folder it is given.
        overwrite: As for :func:`check_output_dir`.
        flag: The option name used in messages.

    Returns:
        ``out``.
    """
    check_output_dir(out, kind, overwrite=overwrite, flag=flag)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp creates 0700; outputs are ordinary folders
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
            os.replace(out, old / "dir")
        try:
            os.replace(tmp, out)
        except BaseException:
            if old is not None:
                os.replace(old / "dir", out)
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # our own temporary folder only
        raise
    if old is not None:
        _remove_own(old / "dir", kind)
        old.rmdir()
    return out


def _remove_own(folder: Path, kind: OutputKind) -> None:
    """Delete graphleaks' own files from ``folder``, then the folder if it is empty."""
    for entry in os.listdir(folder):
        if _is_own(folder / entry, kind):
            (folder / entry).unlink()
    if not os.listdir(folder):
        folder.rmdir()


#: The head of every HTML page graphleaks writes: the generator ``<meta>`` at a fixed place.
HTML_HEAD = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
             '<meta name="generator" content="graphleaks">')
#: The head of the gate's JUnit XML: declaration, generator comment, then the root element.
XML_DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n"
XML_GENERATOR = "<!-- generator: graphleaks -->"
JUNIT_HEAD = XML_DECLARATION + XML_GENERATOR + '\n<testsuites name="graphleaks-privacy-gate" '

#: The first line of the gate's Markdown summary (an HTML comment: invisible when rendered).
SUMMARY_HEAD = "<!-- generator: graphleaks privacy gate -->\n"

#: The head of the CycloneDX ML-BOM ``graphleaks export`` writes: graphleaks is the first
#: tool of ``metadata.tools``, at a fixed place (the keys are written in this order).
CYCLONEDX_HEAD = ('{\n  "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",\n'
                  '  "bomFormat": "CycloneDX",\n  "specVersion": "1.6",\n  "metadata": {\n'
                  '    "tools": {\n      "components": [\n        {\n'
                  '          "type": "application",\n          "name": "graphleaks",\n')
#: The head of the SARIF log ``graphleaks export`` writes: graphleaks is ``tool.driver.name``
#: of the first run, at a fixed place.
SARIF_HEAD = ('{\n  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/'
              'schemas/sarif-schema-2.1.0.json",\n  "version": "2.1.0",\n  "runs": [\n    {\n'
              '      "tool": {\n        "driver": {\n          "name": "graphleaks",\n')

Recogniser = Callable[[bytes], bool]


def is_html_page(head: bytes) -> bool:
    """Whether a file's head is an HTML page graphleaks wrote (:data:`HTML_HEAD`)."""
    return head.startswith(HTML_HEAD.encode())


def is_junit_xml(head: bytes) -> bool:
    """Whether a file's head is the gate's JUnit XML (:data:`JUNIT_HEAD`)."""
    return head.startswith(JUNIT_HEAD.encode())


def is_gate_summary(head: bytes) -> bool:
    """Whether a file starts with a summary graphleaks wrote (:data:`SUMMARY_HEAD`)."""
    return head.startswith(SUMMARY_HEAD.encode())


def is_cyclonedx_bom(head: bytes) -> bool:
    """Whether a file's head is a CycloneDX BOM graphleaks wrote (:data:`CYCLONEDX_HEAD`)."""
    return head.startswith(CYCLONEDX_HEAD.encode())


def is_sarif_log(head: bytes) -> bool:
    """Whether a file's head is a SARIF log graphleaks wrote (:data:`SARIF_HEAD`)."""
    return head.startswith(SARIF_HEAD.encode())


def _printable(path: Path) -> str:
    """``path`` for a one-line message: control characters escaped, never raw."""
    text = str(path)
    if text.isprintable():
        return text
    return text.encode("unicode_escape").decode("ascii")


def check_output_file(path: Path, *, flag: str, is_ours: Recogniser | None,
                      append: bool = False) -> None:
    """Refuse a single output file graphleaks may not write, before any work starts.

    Args:
        path: The file.
        flag: The option name used in messages.
        is_ours: Recognises graphleaks' own earlier output from its first 64 kB (an exact
            marker graphleaks writes at a fixed place, e.g. :func:`is_html_page`); an
            existing file it does not recognise is refused. None: never replace a file.
        append: The file is appended to (a CI step summary), so any regular file is fine;
            links and anything but a regular file are still refused.

    Raises:
        InvalidConfigError: Naming the path and what to do instead.
    """
    shown = _printable(path)
    if path.is_symlink():
        raise InvalidConfigError(f"{flag} {shown} is a symbolic link; give a real file path")
    if not path.exists():
        _check_parent(path, flag)
        return
    if not path.is_file():
        raise InvalidConfigError(f"{flag} {shown} exists and is not a regular file; choose "
                                 "another path")
    if not os.access(path, os.W_OK):
        raise InvalidConfigError(f"{flag} {shown} is not writable")
    if append:
        return
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    if is_ours is None or not is_ours(head):
        raise InvalidConfigError(f"{flag} {shown} exists and was not written by graphleaks; "
                                 "choose another path or remove it yourself")


@dataclass(frozen=True)
class OutputFile:
    """One file to publish with :func:`publish_files`.

    Attributes:
        path: Where it goes.
        flag: The option that named it (for messages).
        text: Its whole content.
        is_ours: As for :func:`check_output_file`.
    """

    path: Path
    flag: str
    text: str
    is_ours: Recogniser | None


def publish_files(files: list[OutputFile]) -> None:
    """Write several output files, all or none, each checked again just before.

    The paths were checked before the work started; they are checked once more (a file may
    have appeared or become a link while the work ran), then every file is written to a
    temporary name and renamed into place (a rename replaces a link that appears in between,
    it never writes through it).

    Raises:
        InvalidConfigError: If a path may not be written; nothing is written then.
    """
    from graphleaks._io import write_texts_atomically

    for f in files:
        check_output_file(f.path, flag=f.flag, is_ours=f.is_ours)
    write_texts_atomically({f.path: f.text for f in files})


def append_output_file(path: Path, text: str, *, flag: str) -> None:
    """Append ``text`` to a regular file (created if missing), never through a link.

    Args:
        path: The file (e.g. ``$GITHUB_STEP_SUMMARY``).
        text: What to append.
        flag: The option name used in messages.

    Raises:
        InvalidConfigError: If ``path`` is a link or not a regular file.
    """
    check_output_file(path, flag=flag, is_ours=None, append=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a link or a FIFO that appeared since the check: refused at open, never followed or
    # waited on
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | nofollow
                     | os.O_NONBLOCK, 0o644)
    except OSError:
        raise InvalidConfigError(f"{flag} {_printable(path)} cannot be opened for appending "
                                 "(a link or not a regular file); give a real file path"
                                 ) from None
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise InvalidConfigError(f"{flag} {_printable(path)} is not a regular file; give "
                                     "a real file path")
        fh.write(text)
