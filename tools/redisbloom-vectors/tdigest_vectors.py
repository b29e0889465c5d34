#!/usr/bin/python3
"""Records t-digest known answers from a real Redis + RedisBloom server.

Runs deterministic scenarios of TDIGEST.* commands (seeded streams: uniform, normal, exponential, heavy
duplicates, sorted and reversed runs, tiny and large compressions, queries between adds, merges) against a
server on 127.0.0.1:PORT over RESP2 and writes every command with the reply it got. Doubles come back as Redis
prints them (the shortest text that reads back to the same binary64), so the Java test compares them exactly.

Output lines:
  # scenario NAME          starts a scenario (the test starts from an empty keyspace)
  > ARG ARG ...            a command, arguments separated by single spaces
  = REPLY                  its reply: OK, an integer, a double, E:message, or [a, b, ...] for arrays

Usage:
  tdigest_vectors.py --port P --out core/src/test/resources/vectors/redisbloom-tdigest.txt

Only the Python standard library is used; /usr/bin/python3 of Debian 12 runs it.
"""

import argparse
import random
import socket


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(65536)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data.decode()

    def _reply(self):
        line = self._line()
        kind, rest = line[0], line[1:]
        if kind == "+":
            return rest
        if kind == "-":
            return "E:" + rest
        if kind == ":":
            return rest
        if kind == "$":
            return None if rest == "-1" else self._exact(int(rest))
        if kind == "*":
            return [self._reply() for _ in range(int(rest))]
        raise ValueError("unexpected reply " + line)

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self._reply()


def fmt(reply):
    if isinstance(reply, list):
        return "[" + ", ".join(fmt(r) for r in reply) + "]"
    return reply


class Recorder:
    def __init__(self, conn):
        self.conn = conn
        self.lines = []

    def scenario(self, name):
        assert self.conn.call("FLUSHALL") == "OK"
        self.lines.append("# scenario " + name)

    def run(self, *args):
        args = [str(a) for a in args]
        for a in args:
            assert a and " " not in a, a
        reply = self.conn.call(*args)
        self.lines.append("> " + " ".join(args))
        self.lines.append("= " + fmt(reply))
        return reply


def num(x):
    return repr(float(x)) if not isinstance(x, str) else x


QUANTILES = ["0", "0.001", "0.01", "0.1", "0.25", "0.5", "0.75", "0.9", "0.99", "0.999", "1"]


def probe(r, key, rng, values):
    """Every read command over the digest, with arguments spread over the data's range."""
    r.run("TDIGEST.INFO", key)
    r.run("TDIGEST.MIN", key)
    r.run("TDIGEST.MAX", key)
    r.run("TDIGEST.QUANTILE", key, *QUANTILES)
    r.run("TDIGEST.QUANTILE", key, "0.9", "0.1", "0.5", "0.5", "0", "1", "0.3")
    lo = min(values) if values else 0.0
    hi = max(values) if values else 1.0
    xs = [lo - 1, lo, hi, hi + 1] + [rng.uniform(lo, hi) for _ in range(6)] + rng.sample(values, min(4, len(values)))
    xs = [num(x) for x in xs]
    r.run("TDIGEST.CDF", key, *xs)
    r.run("TDIGEST.RANK", key, *xs)
    r.run("TDIGEST.REVRANK", key, *xs)
    n = len(values)
    ranks = sorted({0, 1, 2, n // 3, n // 2, max(n - 2, 0), max(n - 1, 0), n, n + 5})
    r.run("TDIGEST.BYRANK", key, *ranks)
    r.run("TDIGEST.BYREVRANK", key, *ranks)
    for lo_cut, hi_cut in [("0", "1"), ("0.1", "0.9"), ("0.25", "0.75"), ("0", "0.5"), ("0.49", "0.51")]:
        r.run("TDIGEST.TRIMMED_MEAN", key, lo_cut, hi_cut)
    r.run("TDIGEST.INFO", key)


def add_batches(r, key, values, batch):
    for i in range(0, len(values), batch):
        r.run("TDIGEST.ADD", key, *[num(v) for v in values[i:i + batch]])


def streams(rng, n):
    return {
        "uniform": [rng.uniform(-1000, 1000) for _ in range(n)],
        "normal": [rng.gauss(50, 10) for _ in range(n)],
        "exponential": [rng.expovariate(0.01) for _ in range(n)],
        "duplicates": [float(rng.randint(0, 9)) for _ in range(n)],
        "sorted": sorted(rng.uniform(0, 1) for _ in range(n)),
        "reversed": sorted((rng.uniform(0, 1) for _ in range(n)), reverse=True),
        "integers": [float(i) for i in range(1, n + 1)],
        "wide": [rng.choice([-1, 1]) * 10 ** rng.uniform(-300, 300) for _ in range(n)],
    }


def record(conn):
    r = Recorder(conn)
    rng = random.Random(20261202)

    for n in [0, 1, 2, 3, 5]:
        r.scenario("tiny-%d" % n)
        r.run("TDIGEST.CREATE", "t")
        values = [rng.uniform(0, 10) for _ in range(n)]
        if values:
            add_batches(r, "t", values, 10)
        probe(r, "t", rng, values)

    for compression in [1, 5, 20, 100, 500]:
        for name, values in streams(rng, 1500).items():
            r.scenario("c%d-%s" % (compression, name))
            r.run("TDIGEST.CREATE", "t", "COMPRESSION", compression)
            add_batches(r, "t", values, 97)
            probe(r, "t", rng, values)

    # Queries compress: interleave them with adds so later compressions start from merged centroids.
    for compression in [10, 100]:
        r.scenario("interleaved-c%d" % compression)
        r.run("TDIGEST.CREATE", "t", "COMPRESSION", compression)
        seen = []
        for step in range(12):
            batch = [rng.gauss(step * 3, 5) for _ in range(rng.randint(1, 150))]
            seen += batch
            add_batches(r, "t", batch, 50)
            r.run("TDIGEST.QUANTILE", "t", "0.5", "0.99")
            r.run("TDIGEST.INFO", "t")
        probe(r, "t", rng, seen)

    # Merges: default compression (the largest source), an explicit one, OVERRIDE, the destination as a source.
    r.scenario("merge")
    parts = {}
    for key, compression in [("a", 50), ("b", 200), ("c", 10)]:
        r.run("TDIGEST.CREATE", key, "COMPRESSION", compression)
        parts[key] = [rng.gauss(len(parts) * 20, 8) for _ in range(700)]
        add_batches(r, key, parts[key], 100)
    every = parts["a"] + parts["b"] + parts["c"]
    r.run("TDIGEST.MERGE", "m1", 3, "a", "b", "c")
    probe(r, "m1", rng, every)
    r.run("TDIGEST.MERGE", "m2", 2, "a", "c", "COMPRESSION", 30)
    probe(r, "m2", rng, parts["a"] + parts["c"])
    r.run("TDIGEST.MERGE", "m2", 1, "b")
    probe(r, "m2", rng, every)
    r.run("TDIGEST.MERGE", "m2", 2, "c", "a", "OVERRIDE")
    probe(r, "m2", rng, parts["a"] + parts["c"])
    r.run("TDIGEST.MERGE", "m2", 2, "m2", "b", "COMPRESSION", 400, "OVERRIDE")
    probe(r, "m2", rng, every)
    r.run("TDIGEST.MERGE", "a", 2, "a", "a")
    probe(r, "a", rng, parts["a"] * 3)

    r.scenario("reset")
    r.run("TDIGEST.CREATE", "t", "COMPRESSION", 40)
    values = [rng.uniform(0, 1) for _ in range(300)]
    add_batches(r, "t", values, 100)
    r.run("TDIGEST.QUANTILE", "t", "0.5")
    r.run("TDIGEST.RESET", "t")
    probe(r, "t", rng, [])
    values = [rng.uniform(5, 6) for _ in range(300)]
    add_batches(r, "t", values, 100)
    probe(r, "t", rng, values)
    return r.lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--source", required=True, help="the server's versions, written into the file")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    lines = record(Conn(args.port))
    with open(args.out, "w") as f:
        f.write("# t-digest known answers recorded by tools/redisbloom-vectors/tdigest_vectors.py from\n")
        f.write("# " + args.source + "\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
