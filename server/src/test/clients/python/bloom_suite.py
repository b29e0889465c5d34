#!/usr/bin/python3
"""Bloomery client suite for redis-py (Debian's python3-redis), through its own module APIs:
r.bf(), r.cf(), r.cms(), r.topk(), r.tdigest(), a transactional pipeline(), and ACL users made with r.acl_setuser()
and connected to with redis-py's username/password.

    /usr/bin/python3 bloom_suite.py --port 6380

Runs with unittest; exits 0 when every test passed. Each test flushes the server first, so point it
only at a throwaway server. redis-py 4.3 speaks RESP2 only (RESP3 arrived in redis-py 5).
"""

import argparse
import sys
import unittest

import redis
from redis.exceptions import ResponseError

PORT = None
HOST = "127.0.0.1"


def dump_chunks(module, key):
    """Every (iterator, data) pair of a SCANDUMP loop, as clients copy a filter."""
    chunks = []
    it = 0
    while True:
        it, data = module.scandump(key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


class RedisPyBloomSuite(unittest.TestCase):
    def setUp(self):
        self.r = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
        self.r.flushall()

    def tearDown(self):
        self.r.flushall()
        for user in self.r.acl_users():
            if user != "default":
                self.r.acl_deluser(user)
        self.r.close()

    def assert_copy_holds(self, module, src, copy, items):
        """Copies src to copy with SCANDUMP/LOADCHUNK; the copy must hold every item and as many filters."""
        for it, data in dump_chunks(module, src):
            self.assertTrue(module.loadchunk(copy, it, data))
        self.assertEqual(module.mexists(copy, *items), [1] * len(items))
        self.assertEqual(module.info(copy).filterNum, module.info(src).filterNum)

    def test_ping_echo(self):
        self.assertTrue(self.r.ping())
        self.assertEqual(self.r.echo("hello"), b"hello")

    def test_bf_reserve_add_exists(self):
        bf = self.r.bf()
        self.assertTrue(bf.create("bf", 0.01, 1000))
        self.assertEqual(bf.add("bf", "a"), 1)
        self.assertEqual(bf.add("bf", "a"), 0)
        self.assertEqual(bf.exists("bf", "a"), 1)
        self.assertEqual(bf.exists("bf", "nope"), 0)
        self.assertEqual(bf.madd("bf", "b", "c", "a"), [1, 1, 0])
        self.assertEqual(bf.mexists("bf", "a", "b", "c", "nope"), [1, 1, 1, 0])
        self.assertEqual(self.r.execute_command("BF.CARD", "bf"), 3)
        self.assertEqual(bf.exists("missing", "a"), 0)

    def test_bf_options_and_errors(self):
        bf = self.r.bf()
        self.assertTrue(bf.create("ns", 0.01, 2, noScale=True))
        self.assertTrue(bf.create("exp", 0.01, 10, expansion=4))
        with self.assertRaisesRegex(ResponseError, "item exists"):
            bf.create("ns", 0.01, 2)
        with self.assertRaisesRegex(ResponseError, r"error rate must be in the range \(0.000000, 1.000000\)"):
            bf.create("bad", 0, 100)
        with self.assertRaisesRegex(ResponseError, r"capacity must be in the range \[1, 1073741824\]"):
            bf.create("bad", 0.01, 0)
        self.assertEqual(self.r.exists("bad"), 0)
        bf.add("ns", "x")
        bf.add("ns", "y")
        with self.assertRaisesRegex(ResponseError, "non scaling filter is full"):
            bf.add("ns", "z")
        # MADD reports the full filter as an error element inside the array.
        reply = bf.madd("ns", "x", "w")
        self.assertEqual(reply[0], 0)
        self.assertIsInstance(reply[1], ResponseError)
        self.assertIn("non scaling filter is full", str(reply[1]))

    def test_bf_insert_info(self):
        bf = self.r.bf()
        self.assertEqual(bf.insert("ins", ["a", "b"], capacity=500, error=0.001, expansion=2), [1, 1])
        info = bf.info("ins")
        self.assertEqual(info.capacity, 500)
        self.assertEqual(info.filterNum, 1)
        self.assertEqual(info.insertedNum, 2)
        self.assertEqual(info.expansionRate, 2)
        self.assertGreater(info.size, 0)
        with self.assertRaisesRegex(ResponseError, "not found"):
            bf.insert("nocreate", ["a"], noCreate=True)
        with self.assertRaisesRegex(ResponseError, "not found"):
            bf.info("missing")

    def test_bf_default_info_matches_the_docs(self):
        bf = self.r.bf()
        bf.add("bf1", "x")
        info = bf.info("bf1")
        self.assertEqual((info.capacity, info.size, info.filterNum, info.insertedNum, info.expansionRate),
                         (100, 240, 1, 1, 2))

    def test_bf_scandump_loadchunk(self):
        bf = self.r.bf()
        bf.create("src", 0.01, 10)
        bf.madd("src", *["i%d" % i for i in range(25)])
        self.assertGreaterEqual(len(dump_chunks(bf, "src")), 3)  # header + one chunk per layer
        self.assert_copy_holds(bf, "src", "copy", ["i%d" % i for i in range(25)])

    def test_cf_commands(self):
        cf = self.r.cf()
        self.assertTrue(cf.create("cf", 1000, bucket_size=4, max_iterations=20, expansion=1))
        self.assertEqual(cf.add("cf", "a"), 1)
        self.assertEqual(cf.add("cf", "a"), 1)
        self.assertEqual(cf.addnx("cf", "a"), 0)
        self.assertEqual(cf.addnx("cf", "b"), 1)
        self.assertEqual(cf.count("cf", "a"), 2)
        self.assertEqual(cf.exists("cf", "b"), 1)
        self.assertEqual(cf.mexists("cf", "a", "b", "nope"), [1, 1, 0])
        self.assertEqual(cf.delete("cf", "a"), 1)
        self.assertEqual(cf.count("cf", "a"), 1)
        self.assertEqual(cf.delete("cf", "nope"), 0)
        with self.assertRaisesRegex(ResponseError, "Not found"):
            cf.delete("missing", "a")
        with self.assertRaisesRegex(ResponseError, "item exists"):
            cf.create("cf", 1000)
        with self.assertRaisesRegex(ResponseError, r"Capacity must be in the range \[2 \* BUCKETSIZE, 1073741824\]"):
            cf.create("small", 1)

    def test_cf_insert_info(self):
        cf = self.r.cf()
        self.assertEqual(cf.insert("ci", ["x", "y"], capacity=100), [1, 1])
        self.assertEqual(cf.insertnx("ci", ["x", "z"]), [0, 1])
        with self.assertRaisesRegex(ResponseError, "not found"):
            cf.insert("nocreate", ["a"], nocreate=True)
        info = cf.info("ci")
        self.assertEqual(info.insertedNum, 3)
        self.assertEqual(info.bucketNum, 64)
        self.assertEqual(info.bucketSize, 2)
        self.assertEqual(info.filterNum, 1)
        self.assertEqual(info.maxIteration, 20)
        cf.create("tiny", 4, bucket_size=1, expansion=0)
        self.assertEqual(cf.insert("tiny", ["a", "b", "c", "d", "e", "f"]).count(-1) > 0, True)

    def test_cf_scandump_loadchunk(self):
        cf = self.r.cf()
        cf.create("csrc", 8, bucket_size=2, expansion=2)
        cf.insert("csrc", ["g%d" % i for i in range(30)])
        self.assert_copy_holds(cf, "csrc", "ccopy", ["g%d" % i for i in range(30)])

    def test_cms_commands(self):
        cms = self.r.cms()
        self.assertTrue(cms.initbydim("c1", 1000, 5))
        self.assertTrue(cms.initbydim("c2", 1000, 5))
        self.assertTrue(cms.initbyprob("p", 0.001, 0.01))
        self.assertEqual(cms.incrby("c1", ["a", "b"], [3, 1]), [3, 1])
        self.assertEqual(cms.incrby("c2", ["a"], [2]), [2])
        self.assertEqual(cms.query("c1", "a", "b", "c"), [3, 1, 0])
        self.assertTrue(cms.initbydim("dest", 1000, 5))
        self.assertTrue(cms.merge("dest", 2, ["c1", "c2"]))
        self.assertEqual(cms.query("dest", "a", "b"), [5, 1])
        self.assertTrue(cms.merge("dest", 2, ["c1", "c2"], [2, 10]))
        self.assertEqual(cms.query("dest", "a"), [26])
        info = cms.info("p")
        self.assertEqual((info.width, info.depth, info.count), (2000, 7, 0))
        with self.assertRaisesRegex(ResponseError, "CMS: key does not exist"):
            cms.query("missing", "a")
        with self.assertRaisesRegex(ResponseError, "CMS: key already exists"):
            cms.initbydim("c1", 10, 2)
        cms.initbydim("other", 10, 2)
        with self.assertRaisesRegex(ResponseError, "CMS: width/depth is not equal"):
            cms.merge("dest", 1, ["other"])

    def test_topk_commands(self):
        topk = self.r.topk()
        self.assertTrue(topk.reserve("tk", 2, 1000, 5, 0.9))
        self.assertEqual(topk.add("tk", "a", "a", "a", "b"), [None, None, None, None])
        self.assertEqual(topk.incrby("tk", ["c"], [2]), ["b"])
        self.assertEqual(topk.query("tk", "a", "b", "c"), [1, 0, 1])
        self.assertEqual(topk.count("tk", "a", "c"), [3, 2])
        self.assertEqual(topk.list("tk"), ["a", "c"])
        self.assertEqual(topk.list("tk", withcount=True), ["a", 3, "c", 2])
        info = topk.info("tk")
        self.assertEqual((info.k, info.width, info.depth), (2, 1000, 5))
        self.assertAlmostEqual(float(info.decay), 0.9)
        with self.assertRaisesRegex(ResponseError, "TopK: key already exists"):
            topk.reserve("tk", 2, 8, 7, 0.9)
        with self.assertRaisesRegex(ResponseError, "TopK: key does not exist"):
            topk.list("missing")

    def test_tdigest_commands(self):
        # redis-py 4.3 writes the RedisBloom 2.2 syntax for CREATE, ADD and MERGE (positional compression,
        # value/weight pairs, two keys) and parses QUANTILE/CDF as one number; RedisBloom 2.4+ refuses that syntax
        # exactly as Bloomery does and answers arrays, so those go through a client without the module's reply
        # callbacks (r.tdigest() installs them on its client), the rest through the module API.
        raw = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
        td = self.r.tdigest()
        with self.assertRaisesRegex(ResponseError, "wrong number of arguments for 'tdigest.create' command"):
            td.create("old", 100)
        self.assertEqual(raw.execute_command("TDIGEST.CREATE", "td", "COMPRESSION", 100), b"OK")
        self.assertEqual(raw.execute_command("TDIGEST.ADD", "td", *range(1, 101)), b"OK")
        self.assertEqual(td.min("td"), 1.0)
        self.assertEqual(td.max("td"), 100.0)
        self.assertEqual(raw.execute_command("TDIGEST.QUANTILE", "td", 0, 0.5, 1), [b"1", b"50.5", b"100"])
        self.assertEqual(raw.execute_command("TDIGEST.CDF", "td", 50), [b"0.495"])
        info = td.info("td")
        self.assertEqual((info.compression, info.capacity), (100, 610))
        self.assertEqual(info.mergedWeight + info.unmergedWeight, 100)
        self.assertEqual(raw.execute_command("TDIGEST.RANK", "td", 0, 50, 101), [-1, 49, 100])
        self.assertEqual(raw.execute_command("TDIGEST.BYRANK", "td", 0, 99, 100), [b"1", b"100", b"inf"])
        self.assertEqual(raw.execute_command("TDIGEST.TRIMMED_MEAN", "td", 0.1, 0.9), b"50.5")
        self.assertEqual(raw.execute_command("TDIGEST.MERGE", "copy", 1, "td", "COMPRESSION", 50), b"OK")
        self.assertEqual(td.info("copy").compression, 50)
        self.assertTrue(td.reset("td"))
        self.assertTrue(td.min("td") != td.min("td"))  # nan once empty
        with self.assertRaisesRegex(ResponseError, "T-Digest: key does not exist"):
            td.min("missing")
        with self.assertRaisesRegex(ResponseError, "T-Digest: quantile should be in \\[0,1\\]"):
            raw.execute_command("TDIGEST.QUANTILE", "copy", 2)
        self.assertEqual(raw.type("copy"), b"TDIS-TYPE")
        raw.close()

    def test_wrongtype(self):
        self.r.cf().add("cf", "x")
        with self.assertRaises(ResponseError) as raised:
            self.r.bf().add("cf", "x")
        self.assertTrue(str(raised.exception).startswith("WRONGTYPE Operation against a key holding the wrong kind of value"))
        self.assertEqual(self.r.bf().exists("cf", "x"), 0)

    def test_transactional_pipeline(self):
        pipe = self.r.pipeline()  # transaction=True: MULTI ... EXEC in one write
        pipe.bf().create("tx", 0.01, 100)
        pipe.bf().add("tx", "a")
        pipe.bf().add("tx", "a")
        pipe.bf().madd("tx", "b", "c")
        pipe.bf().exists("tx", "b")
        pipe.cf().add("txcf", "q")
        pipe.cms().initbydim("txcms", 10, 2)
        pipe.topk().reserve("txtopk", 2, 100, 3, 0.9)
        pipe.bf().info("tx")
        replies = pipe.execute()
        self.assertEqual(replies[:8], [True, 1, 0, [1, 1], 1, 1, True, True])
        self.assertEqual(replies[8].insertedNum, 3)

    def test_transactional_pipeline_with_an_error_inside(self):
        self.r.cf().add("cf", "x")
        pipe = self.r.pipeline()
        pipe.bf().add("bf", "a")
        pipe.bf().add("cf", "a")  # WRONGTYPE at EXEC time
        pipe.bf().exists("bf", "a")
        replies = pipe.execute(raise_on_error=False)
        self.assertEqual(replies[0], 1)
        self.assertIsInstance(replies[1], ResponseError)
        self.assertEqual(replies[2], 1)

    def test_non_transactional_pipeline(self):
        pipe = self.r.pipeline(transaction=False)
        for i in range(200):
            pipe.bf().add("pipe", "url:%d" % i)
        self.assertEqual(pipe.execute(), [1] * 200)
        self.assertEqual(self.r.execute_command("BF.CARD", "pipe"), 200)

    def test_generic_keyspace(self):
        self.r.bf().add("bf", "x")
        self.assertEqual(self.r.dbsize(), 1)
        self.assertEqual(self.r.type("bf"), b"MBbloom--")
        self.assertTrue(self.r.expire("bf", 100))
        self.assertGreater(self.r.ttl("bf"), 0)
        self.assertEqual(self.r.exists("bf"), 1)
        self.assertEqual(self.r.delete("bf"), 1)
        self.assertEqual(self.r.exists("bf"), 0)

    def test_acl_crawler_and_dashboard_users(self):
        self.assertTrue(self.r.acl_setuser("crawler", enabled=True, passwords=["+crawler-secret"],
                                           keys=["crawl:*"], commands=["+bf.add", "+bf.exists"]))
        self.assertTrue(self.r.acl_setuser("dashboard", enabled=True, passwords=["+dashboard-secret"],
                                           keys=["*"], categories=["+@read", "-@dangerous"]))
        self.assertEqual(sorted(self.r.acl_users()), ["crawler", "dashboard", "default"])
        crawler = redis.Redis(host=HOST, port=PORT, username="crawler", password="crawler-secret")
        dashboard = redis.Redis(host=HOST, port=PORT, username="dashboard", password="dashboard-secret")
        try:
            self.assertEqual(crawler.bf().add("crawl:seen", "https://example.org/"), 1)
            self.assertEqual(crawler.bf().exists("crawl:seen", "https://example.org/"), 1)
            with self.assertRaises(redis.exceptions.NoPermissionError):
                crawler.bf().add("other", "x")
            with self.assertRaises(redis.exceptions.NoPermissionError):
                crawler.bf().create("crawl:new", 0.01, 1000)
            self.assertEqual(dashboard.bf().exists("crawl:seen", "https://example.org/"), 1)
            self.assertEqual(dashboard.bf().info("crawl:seen").insertedNum, 1)
            with self.assertRaises(redis.exceptions.NoPermissionError):
                dashboard.bf().add("crawl:seen", "y")
            user = self.r.acl_getuser("crawler")
            self.assertIn("~crawl:*", user["keys"])
            self.assertEqual(self.r.execute_command("ACL", "DRYRUN", "crawler", "bf.add", "other", "x"),
                             b"User crawler has no permissions to access the 'other' key")
            log = self.r.acl_log()
            self.assertTrue(any(e["username"] == "crawler" and e["reason"] == "key" for e in log))
        finally:
            crawler.close()
            dashboard.close()
        with self.assertRaisesRegex(ResponseError, "^WRONGPASS invalid username-password pair"):
            redis.Redis(host=HOST, port=PORT, username="crawler", password="wrong").ping()


def main():
    global PORT, HOST
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args, rest = parser.parse_known_args()
    PORT, HOST = args.port, args.host
    print("redis-py %s against %s:%d" % (redis.__version__, HOST, PORT), flush=True)
    result = unittest.main(argv=[sys.argv[0], "-v"] + rest, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
