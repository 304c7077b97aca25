#!/usr/bin/env python3
"""Loads COUNT copies of each .kmod with one random byte changed (a seeded
random position, xor a random non-zero value) through the runtime's C API
(kiln_module_load_from_memory, in this process) and counts how each ended:
refused with a message naming what is damaged, refused otherwise, or
loaded. Exits 1 on any load or unexplained refusal.

  flip_modules.py LIBKILN_RUNTIME.so COUNT MODULE.kmod...
"""
import ctypes
import random
import re
import sys
from collections import Counter

# What a refusal of a damaged module may say: the part it names.
NAMED = [
    (r"not a Kiln module \(bad magic\)", "magic"),
    (r"module format version \d+: compiled by an? (newer|older) Kiln", "version"),
    (r"the module is truncated", "length"),
    (r"the module is damaged: its payload does not parse", "structure"),
    (r"the module is damaged: section '([^']+)' does not match its digest", None),
    (r"the module is damaged: its digests or section table", "digests"),
]


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.kiln_module_load_from_memory.restype = ctypes.c_void_p
    lib.kiln_module_load_from_memory.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                                 ctypes.POINTER(ctypes.c_void_p)]
    lib.kiln_status_message.restype = ctypes.c_char_p
    lib.kiln_status_message.argtypes = [ctypes.c_void_p]
    lib.kiln_status_free.argtypes = [ctypes.c_void_p]
    lib.kiln_module_release.argtypes = [ctypes.c_void_p]
    count = int(sys.argv[2])
    bad = 0
    for path in sys.argv[3:]:
        data = open(path, "rb").read()
        rng = random.Random(path.rsplit("/", 1)[-1])
        outcomes = Counter()
        for _ in range(count):
            copy = bytearray(data)
            at = rng.randrange(len(copy))
            copy[at] ^= rng.randrange(1, 256)
            module = ctypes.c_void_p()
            status = lib.kiln_module_load_from_memory(bytes(copy), len(copy),
                                                      ctypes.byref(module))
            if not status:
                lib.kiln_module_release(module)
                outcomes["LOADED"] += 1
                bad += 1
                print("%s: byte %d changed and the module loaded" % (path, at))
                continue
            message = lib.kiln_status_message(status).decode()
            lib.kiln_status_free(status)
            for pattern, name in NAMED:
                m = re.search(pattern, message)
                if m:
                    outcomes[name or m.group(1)] += 1
                    break
            else:
                outcomes["UNNAMED"] += 1
                bad += 1
                print("%s: byte %d: %s" % (path, at, message))
        print("%s: %d copies, %d refused naming the damage; %s" % (
            path.rsplit("/", 1)[-1], count, count - outcomes["LOADED"] - outcomes["UNNAMED"],
            ", ".join("%s %d" % kv for kv in sorted(outcomes.items()))))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
