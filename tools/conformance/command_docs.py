#!/usr/bin/python3
"""Writes RedisBloom's COMMAND DOCS reply, exactly as a running Redis + RedisBloom sends it in RESP3.

Bloomery answers COMMAND DOCS for RedisBloom's commands with RedisBloom's own documentation (summary,
since, group, complexity, module, arguments). This asks the real server for every command of module
`bf` (COMMAND LIST FILTERBY MODULE bf, sorted), after HELLO 3, and writes the reply's bytes unchanged.

Usage:
  command_docs.py --port 6399 --out server/src/main/resources/io/bloomery/server/command/admin/redisbloom-command-docs.resp
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import Connection, encode_command  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    conn = Connection(args.host, args.port, 10)
    conn.send(encode_command([b"HELLO", b"3"]))
    conn.read_reply()
    conn.send(encode_command([b"COMMAND", b"LIST", b"FILTERBY", b"MODULE", b"bf"]))
    _, (_, names) = conn.read_reply()
    conn.send(encode_command([b"COMMAND", b"DOCS"] + sorted(n[1] for n in names)))
    raw, _ = conn.read_reply()
    with open(args.out, "wb") as f:
        f.write(raw)
    print("wrote %s: %d commands, %d bytes" % (args.out, len(names), len(raw)))


if __name__ == "__main__":
    main()
