#!/usr/bin/python3
"""The live round trip between a real Redis + RedisBloom and Bloomery, both running (a manual check; CI replays
the recorded payloads instead).

For every case of record_dumps.py: runs the case's commands on both servers, compares the two DUMP payloads
byte for byte (except top-k, whose payload carries C pointers), then RESTOREs each server's payload into the
other as key "k2" and checks that every query answers the same on "k2" there as on "k" at the origin.

Usage: cross_check.py --redis PORT --bloomery PORT
"""

import argparse
import sys

from record_dumps import CASES, Conn, bulk_payload


def queries_on(conn, queries, key):
    return [conn.call([key if a == "k" else a for a in q]) for q in queries]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--redis", type=int, required=True)
    p.add_argument("--bloomery", type=int, required=True)
    a = p.parse_args()
    redis, bloomery = Conn(a.redis), Conn(a.bloomery)
    failures = 0
    for name, cmds, queries in CASES:
        payloads = {}
        for label, conn in (("redis", redis), ("bloomery", bloomery)):
            assert conn.call(["FLUSHALL"]) == b"+OK\r\n"
            for cmd in cmds:
                conn.call(cmd)
            payloads[label] = bulk_payload(conn.call(["DUMP", "k"]))
        same = payloads["redis"] == payloads["bloomery"]
        checks = []
        for source, target, tconn, sconn in (("redis", "bloomery", bloomery, redis),
                                             ("bloomery", "redis", redis, bloomery)):
            r = tconn.call(["RESTORE", "k2", "0", payloads[source]])
            ok = r == b"+OK\r\n" and queries_on(tconn, queries, "k2") == queries_on(sconn, queries, "k")
            checks.append("%s->%s %s" % (source, target, "ok" if ok else "DIFFERS " + repr(r)))
            failures += not ok
        deterministic = not name.startswith("topk/")
        if deterministic and not same:
            failures += 1
        print("%-18s dump %-9s %s" % (name, ("identical" if same else "differs") if deterministic else "(pointers)",
                                      "; ".join(checks)))
    print("failures: %d" % failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
