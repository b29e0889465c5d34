#!/usr/bin/python3
"""redis-py's RedisCluster, used unchanged, against a Bloomery cluster through a killed shard leader.

    /usr/bin/python3 redis_py_cluster.py --port SEED_PORT [--tags 12] [--items 10]

Adds ITEMS Bloom items (bf().add: BF.ADD) and Cuckoo items (cf().add: CF.ADD) to two keys of each of TAGS
{hashtags}, which must fall in the slots of every shard (CLUSTER KEYSLOT); prints "kill-leader" and waits for a
line "killed PORT" on stdin (the test kills a shard's leader with SIGKILL meanwhile); adds as many again; then
checks that every acknowledged add is there (BF.EXISTS 1, CF.COUNT 1, or more only where a failed attempt may
have counted it) and that the client learnt the killed shard's new leader. An add that fails (no leader yet, a
connection to the killed node) is retried for 60 s at most; only an answered add counts as acknowledged.
Prints "FAIL - ..." for each failed check; exits 0 only when all passed ("all checks passed: ...").
"""
import argparse
import logging
import sys
import time

import redis
from redis.cluster import RedisCluster
from redis.crc import key_slot

parser = argparse.ArgumentParser()
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--tags", type=int, default=12)
parser.add_argument("--items", type=int, default=10)
opts = parser.parse_args()
# redis-py logs each redirect and connection error it handles with a traceback; the retries below count them.
logging.getLogger("redis").setLevel(logging.CRITICAL)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL - {what}", flush=True)


errors_seen = []


def retried(call):
    """call()'s answer once it raises no Redis error (60 s at most), and how many attempts raised one."""
    failed = 0
    deadline = time.monotonic() + 60
    while True:
        try:
            return call(), failed
        except redis.exceptions.RedisError as e:
            failed += 1
            if len(errors_seen) < 5:
                errors_seen.append(f"{type(e).__name__}: {e}")
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


rc = RedisCluster(host=opts.host, port=opts.port, socket_timeout=10, socket_connect_timeout=5)
print(f"redis-py {redis.__version__}, seed {opts.host}:{opts.port}", flush=True)

tags = [f"{{redis-py-{t}}}" for t in range(opts.tags)]
primary_of = {}  # tag -> the client's primary for its slot, before the kill
for tag in tags:
    slot = rc.cluster_keyslot(tag + ":bf")
    check(slot == rc.cluster_keyslot(tag + ":cf") == key_slot((tag + ":bf").encode()),
          f"CLUSTER KEYSLOT of {tag}'s keys is {slot}, the same for both and as redis-py computes it")
    primary_of[tag] = rc.nodes_manager.get_node_from_slot(slot).port
primaries = {node.port for node in rc.get_primaries()}
check(len(primaries) >= 2 and set(primary_of.values()) == primaries,
      f"the hashtags' slots are served by every primary: {sorted(set(primary_of.values()))} of {sorted(primaries)}")

acknowledged = {}  # (key, item) -> attempts that failed before the ack


def adds(phase):
    for i in range(opts.items):
        item = f"{phase}-{i}"
        for tag in tags:
            added, failed = retried(lambda: rc.bf().add(tag + ":bf", item))
            acknowledged[(tag + ":bf", item)] = failed
            check(failed > 0 or added == 1, f"BF.ADD {tag}:bf {item} answered {added!r}")
            added, failed = retried(lambda: rc.cf().add(tag + ":cf", item))
            acknowledged[(tag + ":cf", item)] = failed
            check(added == 1, f"CF.ADD {tag}:cf {item} answered {added!r}")


adds("before")
print("kill-leader", flush=True)
line = sys.stdin.readline().split()
if len(line) != 2 or line[0] != "killed":
    print(f"FAIL - expected 'killed PORT' on stdin, got {line!r}", flush=True)
    sys.exit(2)
killed = int(line[1])
started = time.monotonic()
adds("after")
after_seconds = time.monotonic() - started

bf = cf = 0
for (key, item), failed in acknowledged.items():
    if key.endswith(":bf"):
        exists, _ = retried(lambda: rc.bf().exists(key, item))
        check(exists == 1, f"BF.EXISTS {key} {item} answered {exists!r}")
        bf += 1
    else:
        count, _ = retried(lambda: rc.cf().count(key, item))
        check(1 <= count <= 1 + failed, f"CF.COUNT {key} {item} answered {count!r} ({failed} failed attempts)")
        cf += 1
none, _ = retried(lambda: rc.bf().exists(tags[0] + ":none", "before-0"))
check(none == 0, f"BF.EXISTS of a key never added to answered {none!r}")
on_killed = [tag for tag in tags if primary_of[tag] == killed]
check(on_killed, f"some hashtag was served by the killed node {killed}")
for tag in on_killed:
    now = rc.nodes_manager.get_node_from_slot(rc.keyslot(tag)).port
    check(now != killed, f"the client's primary for {tag} is {now}, not the killed {killed}")

retries = sum(acknowledged.values())
print(f"redis-py: {bf} BF.ADD and {cf} CF.ADD checked; {retries} failed attempts retried, the adds after the kill "
      f"took {after_seconds:.1f} s; first errors: {errors_seen}", flush=True)
if failures:
    print(f"{len(failures)} check(s) failed", flush=True)
    sys.exit(1)
print(f"all checks passed: redis-py {bf} BF.ADD and {cf} CF.ADD acknowledged, in {len(tags)} hashtags over "
      f"{len(primaries)} shards, all there after the leader on {killed} was killed", flush=True)
