#!/usr/bin/python3
"""Records DUMP payloads of RedisBloom keys, and the replies that describe those keys, from a real server.

For every case below it runs, on one connection: FLUSHALL, the case's commands (they build key "k"),
DUMP k, then the case's queries. It writes a text file that Bloomery's test
io.bloomery.server.rdb.RecordedDumpsTest replays: Bloomery must DUMP the same bytes for the same
commands (where RedisBloom's state is deterministic) and, after RESTORE of the recorded payload,
answer every query with the same bytes.

Format, one item per line:
  # comment (the source line names the server and module commits)
  case NAME
  cmd ARG ARG ...            arguments hex-encoded, separated by spaces
  dump HEX                   the DUMP reply's payload
  query ARG ARG ...          arguments hex-encoded
  reply HEX                  the exact RESP2 bytes answered

Usage: record_dumps.py --port P --source "Redis 8.0.2 ... RedisBloom b28c294..." --out FILE
Only the Python standard library is used.
"""

import argparse
import datetime
import socket

ITEMS = ["item%d" % i for i in range(100)]

CASES = [
    ("bf/empty", [["BF.RESERVE", "k", "0.01", "100"]],
     [["BF.INFO", "k"], ["BF.EXISTS", "k", "a"]]),
    ("bf/default-add", [["BF.ADD", "k", "x"]],
     [["BF.INFO", "k"], ["BF.EXISTS", "k", "x"], ["BF.EXISTS", "k", "y"], ["BF.CARD", "k"]]),
    ("bf/small", [["BF.RESERVE", "k", "0.01", "1000"], ["BF.MADD", "k"] + ITEMS],
     [["BF.INFO", "k"], ["BF.MEXISTS", "k"] + ITEMS[:10] + ["absent1", "absent2"], ["BF.SCANDUMP", "k", "0"]]),
    ("bf/scaled", [["BF.RESERVE", "k", "0.01", "10", "EXPANSION", "2"], ["BF.MADD", "k"] + ITEMS],
     [["BF.INFO", "k"], ["BF.MEXISTS", "k"] + ITEMS[::7] + ["absent1"], ["BF.SCANDUMP", "k", "0"]]),
    ("bf/nonscaling", [["BF.RESERVE", "k", "0.001", "50", "NONSCALING"], ["BF.MADD", "k"] + ITEMS[:40]],
     [["BF.INFO", "k"], ["BF.EXISTS", "k", "item3"], ["BF.ADD", "k", "new"]]),
    ("bf/large-sparse", [["BF.RESERVE", "k", "0.01", "100000"], ["BF.MADD", "k", "a", "b", "c"]],
     [["BF.INFO", "k"], ["BF.MEXISTS", "k", "a", "b", "c", "d"]]),
    ("cf/empty", [["CF.RESERVE", "k", "100"]],
     [["CF.INFO", "k"], ["CF.EXISTS", "k", "a"]]),
    ("cf/small", [["CF.RESERVE", "k", "1000"], ["CF.INSERT", "k", "ITEMS"] + ITEMS, ["CF.DEL", "k", "item5"]],
     [["CF.INFO", "k"], ["CF.MEXISTS", "k"] + ITEMS[:10] + ["absent"], ["CF.COUNT", "k", "item7"],
      ["CF.SCANDUMP", "k", "0"]]),
    ("cf/expanded", [["CF.RESERVE", "k", "8", "BUCKETSIZE", "2", "EXPANSION", "2"],
                     ["CF.INSERT", "k", "ITEMS"] + ITEMS[:60]],
     [["CF.INFO", "k"], ["CF.MEXISTS", "k"] + ITEMS[:60:6] + ["absent"]]),
    ("cms/dim", [["CMS.INITBYDIM", "k", "20", "5"], ["CMS.INCRBY", "k", "a", "5", "b", "3", "c", "100"]],
     [["CMS.INFO", "k"], ["CMS.QUERY", "k", "a", "b", "c", "d"]]),
    ("cms/prob", [["CMS.INITBYPROB", "k", "0.001", "0.01"], ["CMS.INCRBY", "k", "x", "7"]],
     [["CMS.INFO", "k"], ["CMS.QUERY", "k", "x", "y"]]),
    ("topk/small", [["TOPK.RESERVE", "k", "5", "20", "4", "0.9"],
                    ["TOPK.ADD", "k", "a", "b", "c", "a", "a", "b", "d", "e", "f", "g"]],
     [["TOPK.INFO", "k"], ["TOPK.LIST", "k", "WITHCOUNT"], ["TOPK.QUERY", "k", "a", "g", "z"],
      ["TOPK.COUNT", "k", "a", "b"]]),
]


def encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise IOError("connection closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def reply(self):
        """The raw bytes of one reply (RESP2)."""
        line = self._line()
        kind = line[:1]
        if kind in (b"+", b"-", b":"):
            return line
        if kind == b"$":
            n = int(line[1:-2])
            return line if n < 0 else line + self._take(n + 2)
        if kind == b"*":
            n = int(line[1:-2])
            out = line
            for _ in range(max(n, 0)):
                out += self.reply()
            return out
        raise IOError("unexpected reply %r" % line)

    def call(self, args):
        self.sock.sendall(encode(args))
        return self.reply()


def bulk_payload(raw):
    head, rest = raw.split(b"\r\n", 1)
    assert head.startswith(b"$"), raw
    return rest[:int(head[1:])]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    c = Conn(a.port)
    hexargs = lambda args: " ".join((x.encode() if isinstance(x, str) else x).hex() for x in args)
    lines = ["# DUMP payloads recorded by tools/rdb/record_dumps.py",
             "# source: " + a.source,
             "# recorded: " + datetime.date.today().isoformat()]
    for name, cmds, queries in CASES:
        assert c.call(["FLUSHALL"]) == b"+OK\r\n"
        lines.append("case " + name)
        for cmd in cmds:
            r = c.call(cmd)
            assert not r.startswith(b"-"), (name, cmd, r)
            lines.append("cmd " + hexargs(cmd))
        lines.append("dump " + bulk_payload(c.call(["DUMP", "k"])).hex())
        for q in queries:
            lines.append("query " + hexargs(q))
            lines.append("reply " + c.call(q).hex())
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
