#!/usr/bin/python3
"""Writes the ACL categories and key access of every command of a running Redis (+ RedisBloom).

Bloomery gives a command that Redis also has Redis's ACL categories and key access. This reads them
from the real server's COMMAND reply (raw RESP, through record.py's reader) and prints one line per
command and subcommand: name, comma-separated categories (or -), and the key access of each key spec
in order, comma-separated (R, W, RW, or - when a spec asks for neither, so every key pattern applies;
the n-th key a command names takes the n-th spec's, the last spec's past the end). RedisBloom's commands declare key specs flagged RW alone, which ask for
neither access, so every key pattern applies to them, as the server shows.

Usage:
  acl_commands.py --port 6399 > server/src/main/resources/io/bloomery/server/state/acl/redis-acl-commands.txt
  (then put back the three header lines, naming the server it was read from)
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import Connection, encode_command  # noqa: E402


def text(value):
    return value[1].decode() if isinstance(value[1], bytes) else value[1]


def key_access(info):
    specs = info[8][1] if len(info) > 8 else []
    out = []
    for spec in specs:
        fields = spec[1]
        read = write = False
        for i in range(0, len(fields), 2):
            if text(fields[i]) == "flags":
                flags = [text(f) for f in fields[i + 1][1]]
                read |= "access" in flags
                write |= bool({"insert", "delete", "update"} & set(flags))
        out.append(("R" if read else "") + ("W" if write else "") or "-")
    return ",".join(out) or "-"


def rows_of(info, rows):
    categories = [text(c)[1:] for c in info[6][1]]
    rows.append("%s %s %s" % (text(info[0]), ",".join(categories) or "-", key_access(info)))
    if len(info) > 9 and info[9][1]:
        for sub in info[9][1]:
            rows_of(sub[1], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    conn = Connection(args.host, args.port, 10)
    conn.send(encode_command([b"COMMAND"]))
    _, (_, commands) = conn.read_reply()
    rows = []
    for command in commands:
        rows_of(command[1], rows)
    print("\n".join(sorted(rows)))


if __name__ == "__main__":
    main()
