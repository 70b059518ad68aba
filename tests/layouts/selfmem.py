"""The probes' reads of their own process's memory, through /proc/self/mem, which refuses what is
not mapped (so a wrong guess reads nothing instead of crashing the probe)."""
import os
import struct

MEM = os.open("/proc/self/mem", os.O_RDONLY)


def words(addr, n):
    """The n 64-bit words at addr; OSError where they are not all mapped."""
    data = os.pread(MEM, 8 * n, addr)
    if len(data) != 8 * n:
        raise OSError("short read at 0x%x" % addr)
    return struct.unpack("<%dQ" % n, data)


def maybe_words(addr, n):
    """The same, or None where they are not mapped or addr is no user-space address."""
    try:
        return words(addr, n) if 4096 <= addr < 1 << 47 else None
    except OSError:
        return None


def word(addr):
    """The word at addr, or None."""
    return (maybe_words(addr, 1) or [None])[0]
