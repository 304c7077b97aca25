#!/usr/bin/env python3
"""Writes damaged copies of a .kmod: truncated, wrong magic, unsupported
version, and with its ELF code object's header broken."""
import sys

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
open(out + ".truncated.kmod", "wb").write(data[:100])
open(out + ".magic.kmod", "wb").write(b"NOTAKILN" + data[8:])
open(out + ".version.kmod", "wb").write(data[:8] + bytes([9, 0, 0, 0]) + data[12:])
elf = bytearray(data)
at = data.find(b"\x7fELF")
elf[at + 1:at + 4] = b"XXX"
open(out + ".elf.kmod", "wb").write(bytes(elf))
open(out + ".empty.kmod", "wb").write(b"")
