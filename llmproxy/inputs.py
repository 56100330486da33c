"""The files a command reads, from the paths it is given: one reading for `report`, `explain`, `verify` and
`cassette check`, so that a folder or a glob means the same to each of them.

A path that exists is taken as named; a folder is searched recursively for the files a command reads (its
`patterns`, in name order, those it wants: `report` passes over JSON that is not a cassette). A path that
does not exist but is a glob (`*`, `?`, `[…]`; `**` spans folders) is what it matches, searched as a folder
is: a quoted glob in a CI step, a shell without `**`. What neither exists nor matches is kept as named, for
the command to say it cannot read it.
"""

import glob
from collections.abc import Callable, Sequence
from pathlib import Path

_MAGIC = frozenset("*?[")


def expand_paths(
    paths: Sequence[Path], patterns: Sequence[str], wanted: Callable[[Path], bool] = lambda _: True
) -> list[Path]:
    """The files `paths` name, each once, in the order given: a folder's files that match one of `patterns`, in
    name order, and a glob's files, are those `wanted` keeps (a file named as it is is always kept)."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.exists() or not _MAGIC.intersection(str(path)):
            matched, searched = [path], False
        else:
            matched, searched = [Path(match) for match in sorted(glob.glob(str(path), recursive=True))], True
            if not matched:
                found[path] = None
        for named in matched:
            if named.is_dir():
                files = (file for pattern in patterns for file in named.rglob(pattern) if file.is_file())
                found.update(dict.fromkeys(sorted(file for file in files if wanted(file))))
            elif not searched or wanted(named):
                found[named] = None
    return list(found)
