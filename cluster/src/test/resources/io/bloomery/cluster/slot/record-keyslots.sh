#!/usr/bin/env bash
# Records CLUSTER KEYSLOT answers from a real redis-server in cluster mode into keyslots.txt (read by HashSlotTest).
# Usage: record-keyslots.sh [redis-server binary]   (Debian's redis-server package works; the cluster needs no slots
# assigned to answer CLUSTER KEYSLOT). Each line of the recording: the key in hex, a tab, the slot Redis gave.
set -euo pipefail
server=${1:-redis-server}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
  --dir "$dir" --save '' --appendonly no --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
keys_hex() {
  python3 - <<'PY'
import random
keys = [b"", b"somekey", b"foo{hash_tag}", b"bar{hash_tag}", b"{hash_tag}", b"123456789", b"{user1000}.following",
        b"{user1000}.followers", b"foo{}{bar}", b"foo{{bar}}zap", b"foo{bar}{zap}", b"{", b"}", b"{}", b"}{", b"a{b",
        b"a}b{c}", b"{a}{b}", b"\x00", b"\xff\xfe{\x00}", b"url:https://example.com/a?b=c", "é".encode()]
rng = random.Random(23)
for n in range(200):
    keys.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))
    keys.append(("k" + str(n) + ("{t" + str(n % 7) + "}" if n % 3 == 0 else "")).encode())
for k in keys:
    print(k.hex())
PY
}
{
  echo "# CLUSTER KEYSLOT answers of $("$server" --version | head -1)"
  echo "# recorded by record-keyslots.sh; key in hex <TAB> slot"
  while read -r hex; do
    slot=$(printf '%s' "$hex" | xxd -r -p | redis-cli -p "$port" -x cluster keyslot)
    printf '%s\t%s\n' "$hex" "$slot"
  done < <(keys_hex)
} >"$here/keyslots.txt"
