#!/usr/bin/python3
"""Writes tests/data/io/zipfile.zip with Python's zipfile, for tests/numpy/zip_test.cpp.

Run with /usr/bin/python3:  /usr/bin/python3 tests/golden/gen_zip.py
Members (in this order), read back by jx's ZipReader:
  "check.txt"      stored, b"123456789" (CRC-32 0xCBF43926, the CRC's standard check value)
  "deflated.bin"   deflated, bytes(i % 7 for i in range(5000))
  "zip64.bin"      stored with force_zip64 (a zip64 extra field in its local header), b"z" * 100
  "d\u00e9j\u00e0.txt"       deflated, UTF-8 name, b"caf\xc3\xa9"
and an archive comment, so that the end record is not the last 22 bytes of the file.
Timestamps are fixed (1980-01-01), so the file is the same at every run.
"""
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "io", "zipfile.zip")


def info(name, method):
    z = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    z.compress_type = method
    z.external_attr = 0o600 << 16
    return z


with zipfile.ZipFile(OUT, "w") as f:
    f.writestr(info("check.txt", zipfile.ZIP_STORED), b"123456789")
    f.writestr(info("deflated.bin", zipfile.ZIP_DEFLATED), bytes(i % 7 for i in range(5000)))
    with f.open(info("zip64.bin", zipfile.ZIP_STORED), "w", force_zip64=True) as m:
        m.write(b"z" * 100)
    f.writestr(info("d\u00e9j\u00e0.txt", zipfile.ZIP_DEFLATED), "caf\u00e9".encode())
    f.comment = b"written by tests/golden/gen_zip.py"
print("wrote", os.path.normpath(OUT))
