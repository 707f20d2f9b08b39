#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make_corpus.py - writes the seed corpora of the fuzz targets (committed;
rerun after a wire-format change): corpus_boot_server/ (messages to the
rendezvous port) and corpus_boot_parse/ (ids and headers). Layouts follow
src/bootstrap/boot_wire.h and boot_id.c."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC, VERSION = 0x4F424342, 1
HELLO, DATA, ALL, BYE, ERROR = 1, 2, 3, 4, 5
SECRET = b"fuzz-secret-0123456789abcdef"  # as in fuzz_boot_server.c


def hdr(typ, rank=0, nranks=2, rnd=0, nbytes=0, magic=MAGIC, version=VERSION):
    return struct.pack("<IHHiiII", magic, version, typ, rank, nranks, rnd, nbytes)


def hello(secret=SECRET, pid=1234):
    body = secret.ljust(65, b"\0")[:65] + b"\0\0\0" + struct.pack("<i", pid)
    return hdr(HELLO, nbytes=len(body)) + body


def write(folder, name, data):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    with open(os.path.join(HERE, folder, name), "wb") as f:
        f.write(data)


server = {
    "hello_valid": hello(),
    "hello_valid_then_data": hello() + hdr(DATA, nbytes=8) + b"12345678",
    "hello_valid_then_bye": hello() + hdr(BYE),
    "hello_wrong_secret": hello(secret=b"not-the-secret"),
    "hello_truncated": hello()[:30],
    "header_only": hdr(HELLO, nbytes=72),
    "hello_rank_out_of_range": hdr(HELLO, rank=7, nbytes=72) + hello()[24:],
    "hello_huge_payload": hdr(HELLO, nbytes=0xFFFFFFFF),
    "hello_huge_nranks": hdr(HELLO, nranks=1 << 30, nbytes=72) + hello()[24:],
    "data_before_hello": hdr(DATA, nbytes=4) + b"abcd",
    "bad_magic": hdr(HELLO, magic=0x12345678, nbytes=72) + hello()[24:],
    "bad_version": hdr(HELLO, version=9, nbytes=72) + hello()[24:],
    "http_get": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "empty": b"",
}
for name, data in server.items():
    write("corpus_boot_server", name, data)

ID_MAGIC = 0x4F424349


def unique_id(host=b"127.0.0.1", port=29500, secret=b"0123456789abcdef0123456789abcdef"):
    body = struct.pack("<IH", ID_MAGIC, port) + host.ljust(46, b"\0")[:46] + secret.ljust(33, b"\0")[:33]
    return body.ljust(128, b"\0")


parse = {
    "id_valid": b"\x01" + unique_id(),
    "id_no_port": b"\x01" + unique_id(port=0),
    "id_unterminated_host": b"\x01" + unique_id(host=b"h" * 46),
    "id_garbage": b"\x01" + bytes(range(128)),
    "hdr_valid_hello": b"\x00" + hdr(HELLO, nbytes=72) + struct.pack("<iI", 2, 72),
    "hdr_learn_nranks": b"\x00" + hdr(DATA, rank=3, nranks=4, nbytes=16) + struct.pack("<iI", 0, 4096),
    "hdr_too_large": b"\x00" + hdr(ALL, nbytes=1 << 31) + struct.pack("<iI", 2, 4096),
    "hdr_negative_rank": b"\x00" + hdr(BYE, rank=-1) + struct.pack("<iI", 2, 0),
}
for name, data in parse.items():
    write("corpus_boot_parse", name, data)
