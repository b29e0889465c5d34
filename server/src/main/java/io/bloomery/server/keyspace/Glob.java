package io.bloomery.server.keyspace;

/** Redis's {@code stringmatchlen}: {@code *}, {@code ?}, {@code [abc]}, {@code [^a-z]}, {@code \} escapes. */
public final class Glob {
  private Glob() {}

  public static boolean matches(byte[] pattern, byte[] text) {
    return match(pattern, 0, text, 0, 0);
  }

  private static boolean match(byte[] p, int pi, byte[] s, int si, int depth) {
    if (depth > 1000) {
      return false; // pathological patterns: Redis caps its recursion too
    }
    while (pi < p.length) {
      byte c = p[pi];
      switch (c) {
        case '*' -> {
          while (pi + 1 < p.length && p[pi + 1] == '*') {
            pi++;
          }
          if (pi + 1 == p.length) {
            return true;
          }
          for (int k = si; k <= s.length; k++) {
            if (match(p, pi + 1, s, k, depth + 1)) {
              return true;
            }
          }
          return false;
        }
        case '?' -> {
          if (si >= s.length) {
            return false;
          }
          si++;
        }
        case '[' -> {
          if (si >= s.length) {
            return false;
          }
          pi++;
          boolean not = pi < p.length && p[pi] == '^';
          if (not) {
            pi++;
          }
          boolean found = false;
          while (pi < p.length && p[pi] != ']') {
            if (p[pi] == '\\' && pi + 1 < p.length) {
              pi++;
              found |= p[pi] == s[si];
            } else if (pi + 2 < p.length && p[pi + 1] == '-') {
              int lo = p[pi] & 0xFF;
              int hi = p[pi + 2] & 0xFF;
              if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
              }
              int ch = s[si] & 0xFF;
              found |= ch >= lo && ch <= hi;
              pi += 2;
            } else {
              found |= p[pi] == s[si];
            }
            pi++;
          }
          if (not == found) {
            return false;
          }
          si++;
        }
        case '\\' -> {
          if (pi + 1 < p.length) {
            pi++;
          }
          if (si >= s.length || p[pi] != s[si]) {
            return false;
          }
          si++;
        }
        default -> {
          if (si >= s.length || c != s[si]) {
            return false;
          }
          si++;
        }
      }
      pi++;
    }
    return si == s.length;
  }
}
