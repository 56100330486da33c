"""What an executable is, read from its headers without running it: whether it is a Bun-compiled single binary
(`bun build --compile`: Claude Code, opencode, and many newer CLIs). Such a binary carries its JavaScript in a
section of its own — `.bun` in an ELF or PE file, a `__BUN` segment in a Mach-O file — and trusts what Bun
trusts (its bundled roots plus `NODE_EXTRA_CA_CERTS`), whatever its name.
"""

import struct
from pathlib import Path
from typing import BinaryIO

_ELF = b"\x7fELF"
_MACH_O = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce")
_LOAD_COMMANDS = 1 << 16  # a Mach-O file's load commands (its segments' names) lie within its first bytes
_SECTIONS = 4096  # at most so many section headers are read: a real binary has a few dozen


def bun_compiled(path: Path) -> bool:
    """Whether `path` is a Bun-compiled single binary; False for anything unreadable or not a binary."""
    try:
        with path.open("rb") as file:
            head = file.read(_LOAD_COMMANDS)
            if head.startswith(_ELF):
                return b".bun" in _elf_section_names(file, head)
            if head[:4] in _MACH_O:
                return b"__BUN\0" in head
            if head.startswith(b"MZ"):
                return b".bun\0\0\0\0" in head[:4096]  # a PE section table: 8-byte names, NUL-padded
    except (OSError, struct.error, ValueError):
        return False
    return False


def _elf_section_names(file: BinaryIO, head: bytes) -> set[bytes]:
    """The names of an ELF file's sections (32- or 64-bit, either byte order)."""
    wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
    if wide:
        (offset,) = struct.unpack_from(f"{order}Q", head, 0x28)
        size, count, names_index = struct.unpack_from(f"{order}HHH", head, 0x3A)
    else:
        (offset,) = struct.unpack_from(f"{order}I", head, 0x20)
        size, count, names_index = struct.unpack_from(f"{order}HHH", head, 0x2E)
    if not offset or not count or count > _SECTIONS or names_index >= count:
        return set()
    file.seek(offset)
    table = file.read(size * count)
    headers = [table[index * size : (index + 1) * size] for index in range(count)]
    strings_header = headers[names_index]
    if wide:
        strings_offset, strings_size = struct.unpack_from(f"{order}QQ", strings_header, 0x18)
    else:
        strings_offset, strings_size = struct.unpack_from(f"{order}II", strings_header, 0x10)
    file.seek(strings_offset)
    strings = file.read(min(strings_size, 1 << 20))
    names = set()
    for header in headers:
        (start,) = struct.unpack_from(f"{order}I", header, 0)
        names.add(strings[start : strings.find(b"\0", start)] if start < len(strings) else b"")
    return names
