"""What a command writes, checked before anything is computed and written all at once: :class:`OutputPlan`.

A command that writes files (``agentmemory eval``, ``agentmemory retrieve``,
``python -m agentmemory.report.build``) keeps one plan:

0. **Fix** each output path to the working folder of the moment it is given
   (:class:`OutputPath`: the command line's output options are read as these,
   so they are fixed when the arguments are parsed, before any plugin runs).
   A plugin that changes the working folder (``os.chdir``) moves no output.
1. **Declare** each output as soon as its path is known (:meth:`OutputPlan.file`,
   :meth:`OutputPlan.folder`), before anything is read or computed.  The path
   is made absolute against the working folder of that moment (an
   :class:`OutputPath` already is), and checked at once: not a folder where a
   file is wanted (or the reverse), not inside something that is a file, not a
   FIFO or a device, and not the path of another output of the same run.
2. **Name the inputs** (:meth:`OutputPlan.add_inputs`; for a collection,
   :func:`collection_inputs`), made absolute as they are named.  An output that resolves to an input file
   (the same path, a path through ``..`` or a symbolic link, a hard link:
   anything with the input's device and inode) is refused: writing it would
   replace what the run reads.  An input that is a SQLite database (a store)
   brings its companions (:data:`DATABASE_COMPANIONS`: ``-wal``, ``-shm``,
   ``-journal``, and the store writer's ``-lock``) as inputs too: replacing
   the lock file of a store another process writes would let a second writer in.
3. **Render** every output's content (:meth:`OutputPlan.put`).  Rendering
   validates: an id a TREC file cannot hold, a NaN score, text UTF-8 cannot
   encode are refused here, while no file has been touched.
4. **Write** (:meth:`OutputPlan.write`): every file is first written to a
   temporary file beside its destination (:func:`agentmemory.files.atomic.stage`); only
   when all are written are they renamed into place, in declaration order.
   If any temporary file cannot be written, all are removed (and the folders
   the plan created), and every destination keeps its old bytes.

So a run that fails on bad input writes nothing, and one that succeeds
replaces each output whole.  Each rename is atomic; the set of them is not
(a ``SIGKILL`` between two renames leaves some outputs new and some old,
each complete).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from os import PathLike
from pathlib import Path, PurePath

from agentmemory.errors import OutputError, ParameterError, quote
from agentmemory.files.atomic import commit, make_folders, remove_folders, stage

__all__ = ["DATABASE_COMPANIONS", "OutputPath", "OutputPlan", "collection_inputs", "database_files", "output_path"]

DATABASE_COMPANIONS = ("-wal", "-shm", "-journal", "-lock")
"""The files beside a SQLite database ``X`` that belong to it: ``X-wal``, ``X-shm`` and ``X-journal``
(SQLite's), and ``X-lock``, the lock a store's writer holds (:data:`agentmemory.store.sqlite.LOCK_SUFFIX`)."""

_SQLITE_HEADER = b"SQLite format 3\x00"


class OutputPath(PathLike[str]):
    """An output path as the user gave it, fixed to the working folder of the moment it was given.

    ``given`` is the text as typed (what messages show: ``str(path)``);
    ``path`` the absolute path it named then (what is written:
    ``os.fspath(path)``, ``Path(path)``).  ``path / name`` is the output
    ``name`` inside it, both ways.  An empty text is false, as an empty
    option is.  No path is resolved (``..`` and symbolic links are followed
    when the file is written, as the user's shell would).
    """

    __slots__ = ("base", "given", "path")

    def __init__(self, given: str | PathLike[str], base: Path | None = None) -> None:
        self.given = os.fspath(given)
        self.base = Path.cwd() if base is None else base  # the working folder it was fixed to
        self.path = self.base / self.given

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return self.given

    def __repr__(self) -> str:
        return f"OutputPath({self.given!r}, absolute={os.fspath(self.path)!r})"

    def __bool__(self) -> bool:
        return bool(self.given)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputPath) and (self.given, self.path) == (other.given, other.path)

    def __hash__(self) -> int:
        return hash((self.given, self.path))

    def __truediv__(self, name: str) -> OutputPath:
        joined = OutputPath.__new__(OutputPath)
        joined.given = str(PurePath(self.given) / name)
        joined.base = self.base
        joined.path = self.path / name
        return joined

    def shown(self, path: str | PathLike[str]) -> str:
        """``path`` (one inside :attr:`path`, as a command wrote it) as the user would name it: under ``given``."""
        inside = Path(path)
        try:
            return (PurePath(self.given) / inside.relative_to(self.path)).as_posix()
        except ValueError:
            return inside.as_posix()


def output_path(text: str) -> OutputPath:
    """``text`` as an :class:`OutputPath` fixed to the working folder now: the command line's output options'
    ``type``, so they are fixed when the arguments are parsed, before any plugin can change the folder."""
    return OutputPath(text)


def _absolute(path: str | PathLike[str]) -> Path:
    """``path`` against the working folder now (an :class:`OutputPath` is absolute already); not resolved."""
    given = Path(path)
    return given if given.is_absolute() else Path.cwd() / given


def _as_given(path: str | PathLike[str]) -> PurePath:
    """``path`` as the user wrote it, for messages: an :class:`OutputPath`'s ``given`` text, else itself."""
    return PurePath(path.given if isinstance(path, OutputPath) else os.fspath(path))


class _Input:
    __slots__ = ("path", "shown")

    def __init__(self, shown: str, path: Path) -> None:
        self.shown = shown  # as named, for messages
        self.path = path  # absolute, fixed when named


def database_files(path: str | PathLike[str]) -> list[Path]:
    """A SQLite database's files: ``path`` itself, then one per :data:`DATABASE_COMPANIONS` (whether present or not)."""
    base = Path(path)
    return [base, *(base.with_name(base.name + suffix) for suffix in DATABASE_COMPANIONS)]


def _is_database(path: Path) -> bool:
    """Whether ``path`` is a file that starts like a SQLite database."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except (OSError, ValueError):
        return False


def collection_inputs(path: str | PathLike[str], files: Iterable[str]) -> list[Path]:
    """The input files of a collection read from ``path``: ``files`` (a collection's ``files`` keys) resolved.

    A collection's ``files`` are relative to its folder: ``path`` itself when
    it is a folder, ``path``'s folder when it is a file (then ``path`` is an
    input too).
    """
    root = Path(path)
    base = root if root.is_dir() else root.parent
    found = [base / name for name in files]
    if not root.is_dir():
        found.append(root)
    return found


def _identity(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` names (symbolic links followed), or ``None`` when there is none."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino)


def _kind(mode: int) -> str | None:
    for test, name in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return None


class _Output:
    __slots__ = ("base", "data", "given", "option", "path", "shown")

    def __init__(self, option: str, path: str | PathLike[str]) -> None:
        self.option = option
        self.given = Path(path)  # as declared: what the caller names it by
        self.path = _absolute(path)  # where it is written, fixed now
        self.shown = str(path)  # as the user wrote it, for messages
        # the folder a relative path was joined to (None: it was absolute as given)
        self.base = path.base if isinstance(path, OutputPath) else None if self.given.is_absolute() else Path.cwd()
        self.data: bytes | None = None

    def named(self, err: OutputError) -> OutputError:
        """``err`` about this output, naming it (and folders under the working folder) as the user wrote it."""
        problem = err.problem if self.base is None else err.problem.replace(os.fspath(self.base) + os.sep, "")
        return OutputError(self.shown, problem, err if err.errno is not None else None)


class OutputPlan:
    """The files one run writes, checked against each other and the run's inputs (module docstring)."""

    def __init__(self, inputs: Iterable[str | PathLike[str]] = ()) -> None:
        self._inputs: list[_Input] = []
        self._outputs: list[_Output] = []
        self._folders: list[tuple[str, Path]] = []
        self.add_inputs(inputs)

    # -- declaring ---------------------------------------------------------
    def file(self, option: str, path: str | PathLike[str], *, example: str = "reports/eval-results.json") -> Path:
        """Declare the output file ``path`` (given as ``option``); return it as a Path.

        Raises:
            ParameterError: ``path`` is a folder, a FIFO or a device; a
                parent is a file; it is an input of the run; another output
                of the run has the same path.
        """
        output = _Output(option, path)
        given, shown, target = output.given, output.shown, output.path
        if target.is_dir():
            raise ParameterError(option, shown, "is a folder", f"pass a file path such as {example}")
        try:
            kind = _kind(os.stat(target).st_mode)
        except OSError:
            kind = None
        if kind is not None:
            raise ParameterError(option, shown, f"is {kind}", f"pass the path of a regular file, such as {example}")
        self._check_parents(option, shown, _as_given(path), target)
        self._check_alias(output)
        self._outputs.append(output)
        return given

    def folder(self, option: str, path: str | PathLike[str]) -> Path:
        """Declare the output folder ``path`` (files in it are declared with :meth:`file`); return it.

        Raises:
            ParameterError: ``path`` exists and is not a folder, or a parent is a file.
        """
        given = Path(path)
        shown = str(path)
        target = _absolute(given)
        if target.exists() and not target.is_dir():
            raise ParameterError(option, shown, "is a file", "pass a folder path (it is created if missing)")
        self._check_parents(option, shown, _as_given(path), target)
        self._folders.append((option, target))
        return given

    @staticmethod
    def _check_parents(option: str, shown: str, given: PurePath, target: Path) -> None:
        """The first parent of ``target`` that exists must be a folder (named as in ``given`` when it can be)."""
        named = [*given.parents]
        for depth, parent in enumerate(target.parents):
            if parent.exists():
                if not parent.is_dir():
                    said = named[depth] if depth < len(named) else parent
                    raise ParameterError(
                        option,
                        shown,
                        f"needs {quote(str(said))} to be a folder, but it is a file",
                        "choose a path inside a folder",
                    )
                break

    def add_inputs(self, paths: Iterable[str | PathLike[str]]) -> None:
        """Name files the run reads; every output declared so far, or later, is checked against them.

        A SQLite database brings its companions (:func:`database_files`).

        Raises:
            ParameterError: a declared output is one of these files.
        """
        added: list[_Input] = []
        for given in paths:
            path = _absolute(given)
            named = database_files(given) if _is_database(path) else [Path(given)]
            added.extend(_Input(str(shown), _absolute(shown)) for shown in named)
        self._inputs.extend(added)
        for output in self._outputs:
            self._check_input(output, added)

    def _check_alias(self, output: _Output) -> None:
        self._check_input(output, self._inputs)
        mine = _identity(output.path)
        resolved = output.path.resolve()
        for other in self._outputs:
            if other.path.resolve() == resolved or (mine is not None and _identity(other.path) == mine):
                raise ParameterError(
                    output.option,
                    output.shown,
                    f"is also the path of {other.option} ({quote(other.shown)})",
                    "give every output its own path",
                )

    @staticmethod
    def _check_input(output: _Output, inputs: list[_Input]) -> None:
        mine = _identity(output.path)
        resolved = output.path.resolve()
        for source in inputs:
            if (mine is not None and _identity(source.path) == mine) or source.path.resolve() == resolved:
                raise ParameterError(
                    output.option,
                    output.shown,
                    f"is the input file {quote(source.shown)}",
                    "write outputs elsewhere: a run never replaces what it reads",
                )

    # -- rendering and writing ---------------------------------------------
    def put(self, path: str | PathLike[str], content: str | bytes) -> None:
        """Set the content of the declared output ``path`` (text is encoded as UTF-8).

        Raises:
            ParameterError: ``path`` was not declared, or the text holds a
                character UTF-8 cannot encode (a lone surrogate).
        """
        output = self._find(Path(path))
        if isinstance(content, str):
            try:
                content = content.encode("utf-8")
            except UnicodeEncodeError as err:
                bad = ascii(content[err.start : err.end])
                raise ParameterError(
                    output.option,
                    output.shown,
                    f"would hold the character {bad}, which UTF-8 cannot encode",
                    "remove lone surrogates from the input",
                ) from None
        output.data = bytes(content)

    def _find(self, path: Path) -> _Output:
        for output in self._outputs:
            if path in (output.given, output.path):
                return output
        raise ParameterError("path", str(path), "is not a declared output", "declare it with OutputPlan.file first")

    @property
    def paths(self) -> tuple[Path, ...]:
        """The declared output files as declared, in declaration order."""
        return tuple(o.given for o in self._outputs)

    def write(self) -> list[Path]:
        """Write every output whose content was :meth:`put` (module docstring, step 4); return their paths
        as declared (each is written where it was fixed when declared, whatever the working folder is now).

        Raises:
            OutputError: a file or folder cannot be written; no destination
                was changed and no temporary file remains.
            ParameterError: an output is (now) an input of the run.
        """
        ready = [(o, o.data) for o in self._outputs if o.data is not None]
        for output, _ in ready:
            self._check_input(output, self._inputs)
        created: list[Path] = []
        staged: list[tuple[Path, Path]] = []
        done = 0
        try:
            for output, data in ready:
                created += make_folders(output.path.parent, output.path)
                staged.append((stage(output.path, data), output.path))
            for tmp, path in staged:
                commit(tmp, path)
                done += 1
        except BaseException as err:
            for tmp, _ in staged[done:]:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            if done == 0:
                remove_folders(created)
            if isinstance(err, OutputError):  # named as the user wrote the output, not as fixed
                for output, _ in ready:
                    if err.path == os.fspath(output.path):
                        raise output.named(err) from None
            raise
        return [o.given for o, _ in ready]
