#!/usr/bin/env python3
"""Inspects a Windows executable built here for a Windows this machine cannot run (arm64).

    scripts/pe-check.py BINARY ARCH        ARCH: amd64 or arm64

Reads the PE headers and checks what Windows would check before it runs the file: a PE32+
image for ARCH's machine type, a console program (azd runs the sidecar with pipes), and that every
DLL it imports is part of Windows itself, so that nothing (a MinGW or LLVM runtime DLL, such as
libunwind.dll or libwinpthread-1.dll) is missing on a user's machine. Prints what it found, one
fact per line (`machine:`, `subsystem:`, `imports:`), and exits 1 when a check fails.
scripts/cross-test.sh runs it on the windows-arm64 build.
"""
import struct
import sys

MACHINES = {"amd64": 0x8664, "arm64": 0xAA64}
# DLLs every Windows 10 and 11 has (the API sets are resolved by the loader).
SYSTEM = {
    "advapi32.dll", "bcrypt.dll", "bcryptprimitives.dll", "combase.dll", "crypt32.dll", "iphlpapi.dll",
    "kernel32.dll", "msvcrt.dll", "ncrypt.dll", "ntdll.dll", "ole32.dll", "oleaut32.dll",
    "secur32.dll", "shell32.dll", "ucrtbase.dll", "user32.dll", "userenv.dll", "ws2_32.dll",
    "synchronization.dll", "kernelbase.dll", "dbghelp.dll", "psapi.dll", "rpcrt4.dll",
}


def main() -> int:
    path, arch = sys.argv[1], sys.argv[2]
    data = open(path, "rb").read()
    failures = []
    if data[:2] != b"MZ":
        print("machine: not a PE file")
        return 1
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        print("machine: no PE signature")
        return 1
    machine, sections, _, _, _, opt_size, _ = struct.unpack_from("<HHIIIHH", data, pe + 4)
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    name = {v: k for k, v in MACHINES.items()}.get(machine, hex(machine))
    print(f"machine: {name} ({'PE32+' if magic == 0x20B else hex(magic)})")
    if machine != MACHINES[arch] or magic != 0x20B:
        failures.append(f"not a PE32+ {arch} image")
    subsystem = struct.unpack_from("<H", data, opt + 68)[0]
    print(f"subsystem: {'console' if subsystem == 3 else subsystem}")
    if subsystem != 3:
        failures.append("not a console program")
    # The import directory: data directory 1, after the 112 bytes of PE32+ optional fields.
    import_rva, _ = struct.unpack_from("<II", data, opt + 112 + 8)
    table = []
    for i in range(sections):
        s = opt + opt_size + 40 * i
        vsize, vaddr, rsize, raw = struct.unpack_from("<IIII", data, s + 8)
        table.append((vaddr, max(vsize, rsize), raw))

    def offset(rva):
        for vaddr, size, raw in table:
            if vaddr <= rva < vaddr + size:
                return rva - vaddr + raw
        raise ValueError(f"RVA {rva:#x} is in no section")

    dlls = []
    at = offset(import_rva) if import_rva else None
    while at is not None:
        name_rva = struct.unpack_from("<I", data, at + 12)[0]
        if name_rva == 0:
            break
        o = offset(name_rva)
        dlls.append(data[o:data.index(b"\0", o)].decode("ascii").lower())
        at += 20
    print(f"imports: {', '.join(dlls) or 'none'}")
    foreign = [d for d in dlls if d not in SYSTEM and not d.startswith(("api-ms-win-", "ext-ms-win-"))]
    if foreign:
        failures.append(f"imports DLLs Windows does not have: {', '.join(foreign)}")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
