#!/usr/bin/python3
"""Tests of record.py's case-file parser and escaping (no server needed):
/usr/bin/python3 tools/conformance/test_record.py"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record  # noqa: E402


def parse(text):
    with tempfile.NamedTemporaryFile("w", suffix=".cases", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        return record.parse_case_file(f.name)
    finally:
        os.unlink(f.name)


class TokenizeTest(unittest.TestCase):
    def test_bare_and_quoted_tokens(self):
        toks = record.tokenize('BF.ADD "a b" "\\x00\\xff\\r\\n\\t\\\\\\"" x', "t")
        self.assertEqual([t for t, _ in toks], [b"BF.ADD", b"a b", b"\x00\xff\r\n\t\\\"", b"x"])
        self.assertEqual([q for _, q in toks], [False, True, True, False])

    def test_escape_round_trips_every_byte(self):
        data = bytes(range(256))
        shown = record.escape(data)
        self.assertEqual(record.tokenize(shown, "t"), [(data, True)])

    def test_hostile_tokens_are_refused_with_the_place(self):
        for text in ['"open', '"bad \\q"', '"\\x4"', '"\\xzz"', '"a"b', '"ends with \\']:
            with self.assertRaises(record.CaseSyntaxError, msg=text) as raised:
                record.tokenize(text, "file:7")
            self.assertTrue(str(raised.exception).startswith("file:7"))


class CaseFileTest(unittest.TestCase):
    def test_a_case_with_every_line_kind(self):
        cases = parse('# c\ncase a/b\nproto 2,3\npipeline\nwhy w\n> PING\n> BF.MADD k {i:1..3}\n'
                      '> [any: varies] ECHO x\n> [fields proto: differs] HELLO 3\nraw "PING\\r\\n"\n')
        self.assertEqual([c.name for c in cases], ["a/b@resp2", "a/b@resp3"])
        self.assertEqual([c.proto for c in cases], [2, 3])
        steps = cases[0].steps
        self.assertEqual(steps[1].args, [b"BF.MADD", b"k", b"i1", b"i2", b"i3"])
        self.assertEqual((steps[2].match, steps[2].reason), ("any", "varies"))
        self.assertEqual((steps[3].match, steps[3].match_arg), ("fields", ["proto"]))
        self.assertEqual(steps[4].raw, b"PING\r\n")
        self.assertTrue(cases[0].pipeline)

    def test_references(self):
        cases = parse("case r\n> BF.SCANDUMP k 0\n> BF.LOADCHUNK c $1.0 $1.1\n")
        self.assertEqual(cases[0].steps[1].args[2:], [("ref", 1, 0), ("ref", 1, 1)])

    def test_malformed_case_files_are_refused(self):
        for text in ["> PING\n",                          # before any case
                     "case a\ncase a\n> PING\n",          # duplicate (and empty) case
                     "case bad name\n> PING\n",
                     "case a\nproto 4\n> PING\n",
                     "case a\n",                           # no commands
                     "case a\nbogus line\n",
                     "case a\n>\n",
                     "case a\nraw PING\n",
                     "case a\npipeline\n> X $1.0\n",       # references need replies
                     "case a\n> X {i:5..1}\n"]:
            with self.assertRaises(record.CaseSyntaxError, msg=text):
                parse(text)

    def test_encoded_commands_decode_back(self):
        args = [b"BF.ADD", b"", b"\x00\r\n"]
        self.assertEqual(record.decode_sent(record.encode_command(args)), args)


if __name__ == "__main__":
    unittest.main()
