"""The one way the suite writes a file or a folder that others read: into a temporary name beside
the target, moved into place (`os.replace`, atomic on one file system) only when it is complete. A
write that fails or is killed leaves the previous target as it was; what it left behind is named
`.<target>.tmp-<pid>...`, so that it is recognisable and never mistaken for the target, and the next
write of the target removes it (`remove_stale`: what a process that is no longer running left; under
the target's lock, everything). And the one way two processes take turns on a target: an exclusive
lock file beside it.
"""

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

_SPECIAL_FILES = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file of `mode` (`os.stat`'s `st_mode`) is when it is a special file (a device, a FIFO, a
    socket), in words; None for a regular file, a folder or a link. Reading a FIFO blocks until someone
    writes to it, and replacing a device replaces the device: neither is a file the suite reads or writes."""
    return next((what for is_kind, what in _SPECIAL_FILES if is_kind(mode)), None)


def temporary_name(target: Path | str) -> Path:
    """A name beside `target`, private to this process, with the target's suffix (some writers add
    their own when it is missing, as numpy's `savez` does)."""
    target = Path(target)
    return target.with_name(f".{target.name}.tmp-{os.getpid()}{target.suffix}")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def remove_stale(target: Path | str, locked: bool = False) -> list[Path]:
    """Remove what killed writes of `target` left beside it (`.<target>.tmp-<pid>...` files and folders,
    a DuckDB file's `.wal` with them): those of processes no longer running, or all of them when the
    caller holds the target's lock (no other write of it can be under way). Returns what it removed."""
    target = Path(target)
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.tmp-(\d+)")
    removed: list[Path] = []
    try:
        siblings = list(target.parent.iterdir())
    except FileNotFoundError:
        return removed
    for path in siblings:
        match = pattern.match(path.name)
        if match and (locked or not _running(int(match.group(1)))):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def atomic_write(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path to write; on leaving the block without an error it replaces `target`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target)
    tmp = temporary_name(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(target: Path | str, text: str) -> Path:
    """Write `text` (UTF-8) to `target` atomically."""
    with atomic_write(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


@contextlib.contextmanager
def atomic_folder(target: Path | str) -> Iterator[Path]:
    """Yield a fresh temporary folder to fill; on success it takes the place of the folder `target`."""
    target = Path(target)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    remove_stale(target)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        replace_folder(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replace_folder(source: Path, target: Path) -> None:
    """Move the folder `source` to `target`, replacing what is there."""
    if target.exists():
        shutil.rmtree(target)
    os.replace(source, target)


def mirror_folder(source: Path, target: Path) -> None:
    """Make `target` hold the files of `source` (a flat folder), replacing what is there: hard links where
    the file system allows (no second copy on disk), copies otherwise. The new folder is filled beside
    `target` and swapped in whole."""
    staging = temporary_name(target)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in sorted(Path(source).iterdir()):
        if not path.is_file():
            continue
        try:
            os.link(path, staging / path.name)
        except OSError:
            shutil.copy2(path, staging / path.name)
    replace_folder(staging, target)


@contextlib.contextmanager
def lock(target: Path | str, wait_message: str | None = None) -> Iterator[None]:
    """Hold the exclusive lock of `target` (the file `<target>.lock`) while the block runs; when another
    process holds it, say `wait_message` (if given) and wait for it."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait_message:
                print(wait_message, file=sys.stderr)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def sha256(path: Path | str) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
