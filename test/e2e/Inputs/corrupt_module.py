#!/usr/bin/env python3
"""Writes damaged copies of a .kmod: truncated, wrong magic, unsupported
versions, a byte of its code changed, and its ELF code object's header
broken with every digest made to match (so that the loader, not the
digest, must refuse it)."""
import hashlib
import sys

HEADER = 8 + 4 + 32  # magic, version, SHA-256 of the payload

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()


def write(name, b):
    open(out + "." + name + ".kmod", "wb").write(b)


write("truncated", data[:100])
write("magic", b"NOTAKILN" + data[8:])
write("version", data[:8] + bytes([9, 0, 0, 0]) + data[12:])
write("oldversion", data[:8] + bytes([1, 0, 0, 0]) + data[12:])
write("empty", b"")

at = data.find(b"\x7fELF")
flipped = bytearray(data)
flipped[at + 1000] ^= 0x40
write("codebyte", bytes(flipped))


def code_length(data, at):
    """The length of the protobuf bytes field starting at `at`: its
    varint length just before it, after the field's tag (field 3, wire
    type 2: 0x1a)."""
    for n in range(1, 6):
        if data[at - n - 1] != 0x1A:
            continue
        length, shift = 0, 0
        for b in data[at - n:at]:
            length |= (b & 0x7F) << shift
            shift += 7
        if all(b & 0x80 for b in data[at - n:at - 1]) and not data[at - 1] & 0x80 \
                and at + length <= len(data):
            return length
    raise SystemExit("corrupt_module.py: cannot find the code object's length")


n = code_length(data, at)
elf = bytearray(data)
elf[at + 1:at + 4] = b"XXX"
old, new = hashlib.sha256(data[at:at + n]).digest(), hashlib.sha256(elf[at:at + n]).digest()
where = bytes(elf).find(old, HEADER)
assert where > 0, "the code object's digest is not in the module"
elf[where:where + 32] = new
elf[12:HEADER] = hashlib.sha256(bytes(elf[HEADER:])).digest()
write("elf", bytes(elf))
