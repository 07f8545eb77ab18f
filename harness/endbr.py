"""Stray ENDBR64 in the kernel's text.

With X86_KERNEL_IBT, four bytes f3 0f 1e fa anywhere in executable memory
are a landing pad for a kernel indirect branch, whether the compiler meant
an ENDBR64 instruction there or not: an immediate 0xfa1e0ff3 (a comparison
with ENDBR64, say) makes one in the middle of an instruction.  Kernel code
builds the value at run time instead (gen_endbr() in asm/ibt.h).  This scans
vmlinux for the bytes and reports every place that is not an ENDBR64
instruction.
"""

import bisect
import re
import subprocess

ENDBR64 = b"\xf3\x0f\x1e\xfa"


def _run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _exec_sections(vmlinux):
    """(address, file offset, size) of each executable PROGBITS section"""
    secs = []
    for line in _run("readelf", "-SW", vmlinux).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+PROGBITS\s+([0-9a-f]+)\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*X\S*)", line)
        if m:
            secs.append((int(m.group(1), 16), int(m.group(2), 16),
                         int(m.group(3), 16)))
    return secs


def _functions(vmlinux):
    """{address: name} of the text symbols"""
    syms = {}
    for line in _run("nm", "-n", vmlinux).splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            syms.setdefault(int(f[0], 16), f[2])
    return syms


def stray(vmlinux):
    """[(address, function)] of each f3 0f 1e fa that is not an ENDBR64"""
    with open(vmlinux, "rb") as f:
        data = f.read()
    syms = _functions(vmlinux)
    starts = sorted(syms)
    # A landing pad at a symbol is the compiler's ENDBR64; group the others
    # by function, to disassemble each function once.
    by_func = {}
    for addr, off, size in _exec_sections(vmlinux):
        blob = data[off:off + size]
        i = blob.find(ENDBR64)
        while i >= 0:
            a = addr + i
            if a not in syms:
                k = bisect.bisect_right(starts, a) - 1
                by_func.setdefault(starts[k] if k >= 0 else addr, []).append(a)
            i = blob.find(ENDBR64, i + 1)
    found = []
    for start, addrs in sorted(by_func.items()):
        text = _run("objdump", "-d", "--no-show-raw-insn",
                    f"--start-address={start:#x}",
                    f"--stop-address={max(addrs) + 4:#x}", vmlinux)
        insns = set(int(m.group(1), 16) for m in
                    re.finditer(r"^\s*([0-9a-f]+):\s+endbr64", text, re.M))
        found += [(a, syms.get(start, "?")) for a in addrs if a not in insns]
    return found
