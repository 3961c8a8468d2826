#!/usr/bin/env python3
"""Inspects a macOS build that cannot run here, as far as a Mac's loader would look at it.

    scripts/macho-check.py BINARY {arm64|amd64} MIN_MACOS

Checks, and prints one line each: a thin 64-bit Mach-O executable for the architecture; an entry
point (LC_MAIN); the minimum macOS version (LC_BUILD_VERSION); that it links only the system's
libraries (/usr/lib/...); and its ad-hoc code signature, page by page: every SHA-256 in the
CodeDirectory must match the file's pages, as the kernel checks on Apple silicon (an arm64 binary
whose signature does not match is killed at exec; an Intel build may have none). Exits 1 on the first failure.
"""

import hashlib
import struct
import sys

CPU = {"arm64": 0x0100000C, "amd64": 0x01000007}
LC_LOAD_DYLIB, LC_CODE_SIGNATURE, LC_BUILD_VERSION, LC_MAIN = 0xC, 0x1D, 0x32, 0x80000028
CSMAGIC_EMBEDDED_SIGNATURE, CSMAGIC_CODEDIRECTORY = 0xFADE0CC0, 0xFADE0C02
CS_HASHTYPE_SHA256 = 2


def fail(why):
    print(f"macho-check: FAIL: {why}")
    sys.exit(1)


def load_commands(data):
    magic, cpu, _sub, filetype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != 0xFEEDFACF:
        fail(f"not a thin 64-bit Mach-O (magic {magic:#x})")
    at = 32
    cmds = []
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        cmds.append((cmd, at, size))
        at += size
    return cpu & 0xFFFFFFFF, filetype, cmds


def check_signature(data, cmds):
    sig = [c for c in cmds if c[0] == LC_CODE_SIGNATURE]
    if not sig:
        fail("no code signature (LC_CODE_SIGNATURE); an arm64 Mac refuses to run it")
    dataoff, _datasize = struct.unpack_from("<II", data, sig[0][1] + 8)
    magic, _length, count = struct.unpack_from(">III", data, dataoff)
    if magic != CSMAGIC_EMBEDDED_SIGNATURE:
        fail(f"the signature is not an embedded signature (magic {magic:#x})")
    for i in range(count):
        _type, off = struct.unpack_from(">II", data, dataoff + 12 + 8 * i)
        cd = dataoff + off
        if struct.unpack_from(">I", data, cd)[0] != CSMAGIC_CODEDIRECTORY:
            continue
        (_m, _l, _ver, flags, hash_off, _ident, _nspecial, ncode, code_limit,
         hash_size, hash_type, _platform, page_log2) = struct.unpack_from(">IIIIIIIIIBBBB", data, cd)
        if hash_type != CS_HASHTYPE_SHA256 or hash_size != 32:
            fail(f"the CodeDirectory hashes with type {hash_type}, not SHA-256")
        page = 1 << page_log2
        for n in range(ncode):
            want = data[cd + hash_off + 32 * n: cd + hash_off + 32 * (n + 1)]
            got = hashlib.sha256(data[n * page: min((n + 1) * page, code_limit)]).digest()
            if want != got:
                fail(f"the code signature does not match page {n} (of {ncode}); the binary was "
                     "changed after it was signed")
        return f"{ncode} pages of {page} bytes, flags {flags:#x}"
    fail("the signature has no CodeDirectory")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    path, arch, min_macos = sys.argv[1:]
    data = open(path, "rb").read()
    cpu, filetype, cmds = load_commands(data)
    if cpu != CPU[arch]:
        fail(f"CPU type {cpu:#x}, not {arch}")
    if filetype != 2:
        fail(f"file type {filetype}, not an executable")
    print(f"Mach-O 64-bit executable, {arch}")
    if not any(c[0] == LC_MAIN for c in cmds):
        fail("no entry point (LC_MAIN)")
    print("entry point: LC_MAIN")
    builds = [c for c in cmds if c[0] == LC_BUILD_VERSION]
    if not builds:
        fail("no LC_BUILD_VERSION")
    platform, minos, sdk = struct.unpack_from("<III", data, builds[0][1] + 8)
    got_min = f"{minos >> 16}.{(minos >> 8) & 0xFF}"
    if platform != 1 or got_min != min_macos:
        fail(f"built for platform {platform}, macOS {got_min}; wanted macOS {min_macos}")
    print(f"minimum macOS: {got_min} (SDK {sdk >> 16}.{(sdk >> 8) & 0xFF})")
    libs = []
    for cmd, at, size in cmds:
        if cmd == LC_LOAD_DYLIB:
            name_off = struct.unpack_from("<I", data, at + 8)[0]
            libs.append(data[at + name_off: at + size].split(b"\0")[0].decode())
    foreign = [lib for lib in libs if not lib.startswith("/usr/lib/")]
    if foreign:
        fail(f"links libraries a Mac does not have: {foreign}")
    print("links: " + ", ".join(libs))
    if arch == "amd64" and not any(c[0] == LC_CODE_SIGNATURE for c in cmds):
        print("code signature: none (an Intel Mac does not require one)")
    else:
        print("code signature: ad-hoc, valid: " + check_signature(data, cmds))


main()
