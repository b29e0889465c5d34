#!/usr/bin/python3
"""Records a RESP server's exact reply bytes for the conformance cases.

Reads one or more case files (see README.md next to this file for their syntax), runs every case
against a server on host:port over a raw socket (no client library, so the bytes are exactly what the
server sent), and writes a recording: a readable text file that holds, per case, the bytes sent and
the bytes received, escaped. Bloomery's replay test (io.bloomery.server.conformance) reads that file
and checks Bloomery's replies against it byte for byte.

Every case runs on a fresh connection: HELLO 3 first when the case says "proto 3" (that reply is
checked to be a map and not recorded), then FLUSHALL (its reply must be +OK), then the case's
commands, one at a time or all in one write ("pipeline").

Usage:
  record.py --port 6399 --source "Redis 8.0.2 ... / RedisBloom b28c294 ..." \
      --out server/src/test/resources/conformance/redisbloom.recording tools/conformance/cases/*.cases
  record.py --port 6399 --check-determinism tools/conformance/cases/*.cases
      (runs everything twice, the second time after a case that draws many random numbers inside
       TOPK, and lists every case whose replies changed)

Only the Python standard library is used; /usr/bin/python3 of Debian 12 runs it.
"""

import argparse
import datetime
import os
import re
import socket
import sys

# ---------------------------------------------------------------------------------------------------
# Escaping: the one text form for bytes, shared by case files and recordings.


def escape(data: bytes) -> str:
    out = []
    for b in data:
        if b == 0x5C:
            out.append("\\\\")
        elif b == 0x22:
            out.append('\\"')
        elif b == 0x0D:
            out.append("\\r")
        elif b == 0x0A:
            out.append("\\n")
        elif b == 0x09:
            out.append("\\t")
        elif 0x20 <= b <= 0x7E:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return '"' + "".join(out) + '"'


class CaseSyntaxError(Exception):
    pass


def tokenize(text: str, where: str):
    r"""Splits a line into tokens: bare words, or "quoted" strings with \\ \" \r \n \t \xHH escapes.

    Returns a list of (bytes, quoted) pairs."""
    tokens = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t":
            i += 1
            continue
        if c == '"':
            i += 1
            buf = bytearray()
            while True:
                if i >= n:
                    raise CaseSyntaxError("%s: unterminated quoted string" % where)
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n:
                        raise CaseSyntaxError("%s: lone backslash at the end" % where)
                    e = text[i + 1]
                    if e in "\\\"":
                        buf.append(ord(e))
                        i += 2
                    elif e == "r":
                        buf.append(13)
                        i += 2
                    elif e == "n":
                        buf.append(10)
                        i += 2
                    elif e == "t":
                        buf.append(9)
                        i += 2
                    elif e == "x":
                        hexits = text[i + 2:i + 4]
                        if not re.fullmatch(r"[0-9a-fA-F]{2}", hexits):
                            raise CaseSyntaxError("%s: bad \\x escape %r" % (where, text[i:i + 4]))
                        buf.append(int(hexits, 16))
                        i += 4
                    else:
                        raise CaseSyntaxError("%s: unknown escape \\%s" % (where, e))
                else:
                    buf.extend(c.encode("utf-8"))
                    i += 1
            if i < n and text[i] not in " \t":
                raise CaseSyntaxError("%s: text right after a closing quote" % where)
            tokens.append((bytes(buf), True))
        else:
            j = i
            while j < n and text[j] not in " \t":
                j += 1
            tokens.append((text[i:j].encode("utf-8"), False))
            i = j
    return tokens


RANGE = re.compile(rb"^\{([^{}:]*):(-?\d+)\.\.(-?\d+)\}$")
REF = re.compile(rb"^\$(\d+)\.(\d+)$")

# ---------------------------------------------------------------------------------------------------
# Case files.


class Step:
    """One thing sent: a command (list of argument templates) or raw bytes, plus how to match."""

    def __init__(self, line_no, args=None, raw=None, match="exact", match_arg=None, reason=None):
        self.line_no = line_no
        self.args = args  # list of bytes, or ("ref", cmd_index, element_index)
        self.raw = raw
        self.match = match  # exact | any | fields
        self.match_arg = match_arg  # for fields: list of field names
        self.reason = reason


class Case:
    def __init__(self, name, file, line_no):
        self.name = name
        self.file = file
        self.line_no = line_no
        self.proto = 2
        self.pipeline = False
        self.why = None
        self.steps = []


MATCH_PREFIX = re.compile(r"^\[(any|fields ([A-Za-z0-9_,\-]+)):\s*([^\]]+)\]\s*")


def parse_command_args(rest, where):
    args = []
    for tok, quoted in tokenize(rest, where):
        if not quoted:
            m = RANGE.match(tok)
            if m:
                prefix, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
                if hi < lo or hi - lo > 100000:
                    raise CaseSyntaxError("%s: bad range %r" % (where, tok))
                args.extend(prefix + str(k).encode() for k in range(lo, hi + 1))
                continue
            m = REF.match(tok)
            if m:
                args.append(("ref", int(m.group(1)), int(m.group(2))))
                continue
        args.append(tok)
    if not args:
        raise CaseSyntaxError("%s: a command needs at least one argument" % where)
    return args


def parse_case_file(path):
    cases = []
    names = set()
    current = None
    with open(path, "r", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            where = "%s:%d" % (path, line_no)
            text = line.rstrip("\n")
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if stripped.startswith("case "):
                name = stripped[5:].strip()
                if not re.fullmatch(r"[A-Za-z0-9_.:/\-]+", name):
                    raise CaseSyntaxError("%s: bad case name %r" % (where, name))
                if name in names:
                    raise CaseSyntaxError("%s: duplicate case name %s" % (where, name))
                names.add(name)
                current = Case(name, path, line_no)
                cases.append(current)
                continue
            if current is None:
                raise CaseSyntaxError("%s: text before the first 'case'" % where)
            if stripped.startswith(">"):
                rest = stripped[1:].strip()
                match, match_arg, reason = "exact", None, None
                m = MATCH_PREFIX.match(rest)
                if m:
                    if m.group(1) == "any":
                        match = "any"
                    else:
                        match = "fields"
                        match_arg = m.group(2).split(",")
                    reason = m.group(3).strip()
                    rest = rest[m.end():]
                current.steps.append(Step(line_no, args=parse_command_args(rest, where), match=match,
                                          match_arg=match_arg, reason=reason))
            elif stripped.startswith("raw "):
                toks = tokenize(stripped[4:], where)
                if len(toks) != 1 or not toks[0][1]:
                    raise CaseSyntaxError("%s: raw takes one quoted string" % where)
                current.steps.append(Step(line_no, raw=toks[0][0]))
            elif stripped == "pipeline":
                current.pipeline = True
            elif stripped.startswith("proto "):
                value = stripped[6:].strip()
                if value not in ("2", "3", "2,3"):
                    raise CaseSyntaxError("%s: proto is 2, 3 or 2,3 (the case runs once in each)" % where)
                current.proto = 23 if value == "2,3" else int(value)
            elif stripped.startswith("why "):
                current.why = stripped[4:].strip()
            else:
                raise CaseSyntaxError("%s: unknown line %r" % (where, stripped))
    expanded = []
    for case in cases:
        if case.proto != 23:
            expanded.append(case)
            continue
        for proto in (2, 3):
            twin = Case("%s@resp%d" % (case.name, proto), case.file, case.line_no)
            twin.proto, twin.pipeline, twin.why, twin.steps = proto, case.pipeline, case.why, case.steps
            expanded.append(twin)
    cases = expanded
    for case in cases:
        if not case.steps:
            raise CaseSyntaxError("%s:%d: case %s has no commands" % (case.file, case.line_no, case.name))
        if case.pipeline and any(isinstance(a, tuple) for s in case.steps if s.args for a in s.args):
            raise CaseSyntaxError("%s:%d: case %s: $N.M references need replies, not a pipeline"
                                  % (case.file, case.line_no, case.name))
    return cases


# ---------------------------------------------------------------------------------------------------
# RESP reading: returns each complete reply's exact bytes and a decoded tree (for $N.M and fields).


class Connection:
    def __init__(self, host, port, timeout):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = bytearray()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf.extend(chunk)

    def _line(self, pos):
        while True:
            idx = self.buf.find(b"\r\n", pos)
            if idx >= 0:
                return idx
            self._fill()

    def _need(self, end):
        while len(self.buf) < end:
            self._fill()

    def _value(self, pos):
        """Parses one RESP2/RESP3 value at pos; returns (decoded, end)."""
        self._need(pos + 1)
        t = chr(self.buf[pos])
        eol = self._line(pos)
        head = bytes(self.buf[pos + 1:eol])
        end = eol + 2
        if t in "+-:,(_#":
            return (t, head), end
        if t in "$!=":
            n = int(head)
            if n < 0:
                return (t, None), end
            self._need(end + n + 2)
            return (t, bytes(self.buf[end:end + n])), end + n + 2
        if t in "*~>":
            n = int(head)
            if n < 0:
                return (t, None), end
            items = []
            for _ in range(n):
                v, end = self._value(end)
                items.append(v)
            return (t, items), end
        if t in "%|":
            n = int(head)
            items = []
            for _ in range(2 * n):
                v, end = self._value(end)
                items.append(v)
            if t == "|":  # an attribute precedes the real reply
                v, end = self._value(end)
                return v, end
            return (t, items), end
        raise ValueError("unknown RESP type byte %r" % t)

    def read_reply(self):
        value, end = self._value(0)
        raw = bytes(self.buf[:end])
        del self.buf[:end]
        return raw, value


def encode_command(args):
    out = bytearray(b"*%d\r\n" % len(args))
    for a in args:
        out.extend(b"$%d\r\n" % len(a))
        out.extend(a)
        out.extend(b"\r\n")
    return bytes(out)


def scalar_bytes(value, where):
    t, v = value
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    raise CaseSyntaxError("%s: the referenced reply element is not a string or number: %r" % (where, value))


def resolve(step, replies, where):
    args = []
    for a in step.args:
        if isinstance(a, tuple):
            _, ci, ei = a
            if ci < 1 or ci > len(replies):
                raise CaseSyntaxError("%s: $%d.%d refers to a command not yet answered" % (where, ci, ei))
            t, items = replies[ci - 1]
            if t not in "*~" or items is None or ei >= len(items):
                raise CaseSyntaxError("%s: $%d.%d: reply %d has no element %d" % (where, ci, ei, ci, ei))
            args.append(scalar_bytes(items[ei], where))
        else:
            args.append(a)
    return args


def run_case(case, host, port, timeout):
    """Returns a list of (sent bytes, step, reply bytes)."""
    conn = Connection(host, port, timeout)
    try:
        if case.proto == 3:
            conn.send(encode_command([b"HELLO", b"3"]))
            raw, value = conn.read_reply()
            if value[0] != "%":
                raise RuntimeError("case %s: HELLO 3 did not answer a map: %r" % (case.name, raw))
        conn.send(encode_command([b"FLUSHALL"]))
        raw, _ = conn.read_reply()
        if raw != b"+OK\r\n":
            raise RuntimeError("case %s: FLUSHALL answered %r" % (case.name, raw))
        results = []
        if case.pipeline:
            sent = [s.raw if s.raw is not None else encode_command(s.args) for s in case.steps]
            conn.send(b"".join(sent))
            for data, step in zip(sent, case.steps):
                raw, _ = conn.read_reply()
                results.append((data, step, raw))
        else:
            decoded = []
            for step in case.steps:
                where = "%s:%d" % (case.file, step.line_no)
                data = step.raw if step.raw is not None else encode_command(resolve(step, decoded, where))
                conn.send(data)
                raw, value = conn.read_reply()
                decoded.append(value)
                results.append((data, step, raw))
        return results
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------------
# Recording output.

FORMAT_NOTE = """\
# Format (read by io.bloomery.server.conformance.Recording):
#   case NAME / proto 2|3 / mode sequential|pipelined / [why TEXT] / steps / end
#   a step is one line sent and one line expected:
#     > "arg" "arg" ...      a command, sent as a RESP array of bulk strings
#     >raw "bytes"           bytes sent exactly as they are (inline commands, hostile input)
#     < "bytes"              the exact reply bytes
#     <any "reason" "bytes"  only the RESP type of the reply is compared (the recorded bytes are shown)
#     <fields "f1,f2" "reason" "bytes"
#                            the reply is a map (RESP3) or a flat name/value array (RESP2): only the
#                            named fields' values are compared byte for byte
#   Strings are in double quotes; \\\\ \\" \\r \\n \\t and \\xHH are the only escapes.
#   Before its steps, every case opens a new connection, sends HELLO 3 if proto is 3 (reply must be
#   a map, not compared further) and FLUSHALL (reply must be +OK).
"""


def write_recording(out, cases_and_results, source, case_files, server_info):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = []
    lines.append("# Bloomery conformance recording: the exact bytes a real Redis + RedisBloom sent back.")
    lines.append("# Source: %s" % source)
    for k, v in server_info:
        lines.append("# Server reported: %s=%s" % (k, v))
    lines.append("# Recorded: %s by tools/conformance/record.py from %s" % (now, ", ".join(case_files)))
    ncmd = sum(len(r) for _, r in cases_and_results)
    lines.append("# Cases: %d, commands: %d" % (len(cases_and_results), ncmd))
    lines.append("#")
    lines.extend(FORMAT_NOTE.rstrip("\n").split("\n"))
    lines.append("")
    for case, results in cases_and_results:
        lines.append("case %s" % case.name)
        lines.append("proto %d" % case.proto)
        lines.append("mode %s" % ("pipelined" if case.pipeline else "sequential"))
        if case.why:
            lines.append("why %s" % case.why)
        for data, step, reply in results:
            if step.raw is not None:
                lines.append(">raw %s" % escape(data))
            else:
                lines.append("> " + " ".join(escape(a) for a in decode_sent(data)))
            if step.match == "exact":
                lines.append("< %s" % escape(reply))
            elif step.match == "any":
                lines.append("<any %s %s" % (escape(step.reason.encode()), escape(reply)))
            else:
                lines.append("<fields %s %s %s" % (escape(",".join(step.match_arg).encode()),
                                                   escape(step.reason.encode()), escape(reply)))
        lines.append("end")
        lines.append("")
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)


def decode_sent(data):
    """Splits an encoded RESP command back into its arguments (for the readable recording)."""
    assert data.startswith(b"*")
    eol = data.index(b"\r\n")
    n = int(data[1:eol])
    pos = eol + 2
    args = []
    for _ in range(n):
        eol = data.index(b"\r\n", pos)
        ln = int(data[pos + 1:eol])
        args.append(data[eol + 2:eol + 2 + ln])
        pos = eol + 2 + ln + 2
    return args


def server_facts(host, port, timeout):
    """What the server says it is (INFO server, MODULE LIST), for the recording's header; a server
    that answers neither in Redis's shape simply contributes no facts."""
    conn = Connection(host, port, timeout)
    facts = []
    try:
        conn.send(encode_command([b"INFO", b"server"]))
        _, (t, info) = conn.read_reply()
        if isinstance(info, (bytes, bytearray)):
            for line in info.decode("utf-8", "replace").splitlines():
                if line.startswith(("redis_version:", "redis_git_sha1:", "redis_build_id:")):
                    k, v = line.split(":", 1)
                    facts.append((k, v.strip()))
        conn.send(encode_command([b"MODULE", b"LIST"]))
        _, (t, mods) = conn.read_reply()
        for mod in mods if isinstance(mods, list) else []:
            fields = mod[1] if isinstance(mod[1], list) else []
            d = {}
            for i in range(0, len(fields) - 1, 2):
                d[fields[i][1]] = fields[i + 1][1]
            name, ver = d.get(b"name"), d.get(b"ver")
            if isinstance(name, bytes) and isinstance(ver, bytes):
                facts.append(("module", "%s ver %s" % (name.decode(), ver.decode())))
    finally:
        conn.close()
    return facts


def compared_part(step, reply):
    """What the replay test compares of a reply: all of it, its type byte, or the named fields."""
    if step.match == "exact":
        return reply
    if step.match == "any":
        return reply[:1]
    conn = Connection.__new__(Connection)
    conn.buf = bytearray(reply)
    conn.sock = None
    t, items = conn._value(0)[0]
    wanted = [f.encode() for f in step.match_arg]
    found = {}
    for i in range(0, len(items) - 1, 2):
        if items[i][1] in wanted:
            found[items[i][1]] = items[i + 1]
    return t, sorted(found.items())


BURN_CASE = """\
case determinism/burn
> TOPK.RESERVE burn 1 1 1 0.5
> TOPK.ADD burn {x:0..999}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--out", help="recording to write")
    p.add_argument("--source", default="unknown", help="which public source commits the server was built from")
    p.add_argument("--check-determinism", action="store_true")
    p.add_argument("case_files", nargs="+")
    a = p.parse_args()

    try:
        cases = []
        seen = set()
        for path in a.case_files:
            for case in parse_case_file(path):
                if case.name in seen:
                    raise CaseSyntaxError("%s:%d: case %s also defined in another file"
                                          % (path, case.line_no, case.name))
                seen.add(case.name)
                cases.append(case)
    except (CaseSyntaxError, OSError) as e:
        print("record.py: %s" % e, file=sys.stderr)
        return 2

    try:
        first = [(c, run_case(c, a.host, a.port, a.timeout)) for c in cases]
    except (CaseSyntaxError, OSError, RuntimeError, ValueError) as e:
        print("record.py: %s" % e, file=sys.stderr)
        return 1
    if a.check_determinism:
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".cases", delete=False) as f:
            f.write(BURN_CASE)
        for c in parse_case_file(f.name):
            run_case(c, a.host, a.port, a.timeout)
        os.unlink(f.name)
        changed = []
        for case, results in first:
            again = run_case(case, a.host, a.port, a.timeout)
            if [compared_part(r[1], r[2]) for r in again] != [compared_part(r[1], r[2]) for r in results]:
                changed.append(case.name)
        for name in changed:
            print("not deterministic: %s" % name)
        print("%d cases, %d not deterministic" % (len(first), len(changed)))
        return 1 if changed else 0
    if a.out:
        write_recording(a.out, first, a.source, [os.path.relpath(x) for x in a.case_files],
                        server_facts(a.host, a.port, a.timeout))
        print("wrote %s: %d cases, %d commands" % (a.out, len(first), sum(len(r) for _, r in first)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
