// node-redis's createCluster with @redis/bloom, used unchanged, against a Bloomery cluster through a killed shard
// leader (run by the cli module's ClusterClientsIT).
//
//   node cluster-check.mjs --port SEED_PORT [--host HOST] [--tags 12] [--items 10]
//
// Adds ITEMS Bloom items (cluster.bf.mAdd: BF.MADD, one call per key) and Cuckoo items (cluster.cf.add: CF.ADD) to
// two keys of each of TAGS {hashtags}, which must fall in the slots of every master (CLUSTER KEYSLOT); prints
// "kill-leader" and waits for a line "killed PORT" on stdin (the test kills a shard's leader with SIGKILL
// meanwhile); adds as many again; then checks that every acknowledged add is there (BF.MEXISTS all true, CF.COUNT 1,
// or more only where a failed attempt may have counted it) and that the client learnt the killed shard's new
// leader. An add that fails (no leader yet, a connection to the killed node, a command timeout) is retried for 60 s
// at most; only an answered add counts as acknowledged. Prints "FAIL - ..." for each failed check; exits 0 only when
// all passed ("all checks passed: ...").
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createCluster } from 'redis';

function usage(message) {
  console.error(`cluster-check.mjs: ${message}\n`
    + 'usage: node cluster-check.mjs --port PORT [--host HOST] [--tags N] [--items N]');
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      tags: { type: 'string', default: '12' },
      items: { type: 'string', default: '10' },
    },
  }));
} catch (err) {
  usage(err.message);
}
const opts = { host: values.host, port: Number(values.port), tags: Number(values.tags), items: Number(values.items) };
if (!Number.isInteger(opts.port) || opts.port <= 0 || opts.port > 65535) usage('--port must be a TCP port');
if (!(opts.tags > 0 && opts.items > 0)) usage('--tags and --items must be positive');

const failures = [];
function check(ok, what) {
  if (!ok) {
    failures.push(what);
    console.log(`FAIL - ${what}`);
  }
}

const errorsSeen = [];
// call()'s answer once it does not reject (60 s at most), and how many attempts rejected.
async function retried(call) {
  let failed = 0;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return [await call(), failed];
    } catch (err) {
      failed++;
      if (errorsSeen.length < 5) errorsSeen.push(`${err.name}: ${err.message}`);
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const cluster = createCluster({
  rootNodes: [{ socket: { host: opts.host, port: opts.port } }],
  defaults: { socket: { connectTimeout: 5000 } },
}).withCommandOptions({ timeout: 10_000 });
cluster.on('error', (err) => {
  if (errorsSeen.length < 5) errorsSeen.push(`cluster error event: ${err.message}`);
});
await cluster.connect();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const tags = Array.from({ length: opts.tags }, (_, t) => `{node-redis-${t}}`);
const slotOf = new Map(); // tag -> its slot
const masterOf = new Map(); // tag -> the client's master for its slot (its port), before the kill
for (const tag of tags) {
  const slot = await cluster.sendCommand(tag, true, ['CLUSTER', 'KEYSLOT', `${tag}:bf`]);
  const other = await cluster.sendCommand(tag, true, ['CLUSTER', 'KEYSLOT', `${tag}:cf`]);
  check(slot === other, `CLUSTER KEYSLOT of ${tag}'s keys: ${slot} and ${other}`);
  slotOf.set(tag, slot);
  masterOf.set(tag, cluster.getSlotMaster(slot).port);
}
const masters = new Set(cluster.masters.map((m) => m.port));
const used = new Set(masterOf.values());
check(masters.size >= 2 && used.size === masters.size,
  `the hashtags' slots are served by every master: ${[...used].sort()} of ${[...masters].sort()}`);

const acknowledged = []; // { key, items, failed }
async function adds(phase) {
  const items = Array.from({ length: opts.items }, (_, i) => `${phase}-${i}`);
  for (const tag of tags) {
    const [added, failed] = await retried(() => cluster.bf.mAdd(`${tag}:bf`, items));
    acknowledged.push({ key: `${tag}:bf`, items, failed });
    check(failed > 0 || (added.length === items.length && added.every((a) => a === true)),
      `BF.MADD ${tag}:bf ${items.join(' ')} answered ${JSON.stringify(added)}`);
    for (const item of items) {
      const [ok, failedCf] = await retried(() => cluster.cf.add(`${tag}:cf`, item));
      acknowledged.push({ key: `${tag}:cf`, items: [item], failed: failedCf });
      check(ok === true, `CF.ADD ${tag}:cf ${item} answered ${JSON.stringify(ok)}`);
    }
  }
}

await adds('before');
console.log('kill-leader');
const { value: line } = await lines.next();
const words = String(line ?? '').trim().split(/\s+/);
if (words.length !== 2 || words[0] !== 'killed') {
  console.log(`FAIL - expected 'killed PORT' on stdin, got ${JSON.stringify(line)}`);
  process.exit(2);
}
const killed = Number(words[1]);
const started = Date.now();
await adds('after');
const afterSeconds = (Date.now() - started) / 1000;

let bf = 0;
let cf = 0;
for (const { key, items, failed } of acknowledged) {
  if (key.endsWith(':bf')) {
    const [exists] = await retried(() => cluster.bf.mExists(key, items));
    check(exists.length === items.length && exists.every((e) => e === true),
      `BF.MEXISTS ${key} ${items.join(' ')} answered ${JSON.stringify(exists)}`);
    bf += items.length;
  } else {
    const [count] = await retried(() => cluster.cf.count(key, items[0]));
    check(count >= 1 && count <= 1 + failed, `CF.COUNT ${key} ${items[0]} answered ${count} (${failed} failed attempts)`);
    cf++;
  }
}
const [none] = await retried(() => cluster.bf.mExists(`${tags[0]}:none`, ['before-0']));
check(none.length === 1 && none[0] === false, `BF.MEXISTS of a key never added to answered ${JSON.stringify(none)}`);
const onKilled = tags.filter((tag) => masterOf.get(tag) === killed);
check(onKilled.length > 0, `some hashtag was served by the killed node ${killed}`);
for (const tag of onKilled) {
  const now = cluster.getSlotMaster(slotOf.get(tag)).port;
  check(now !== killed, `the client's master for ${tag} is ${now}, not the killed ${killed}`);
}

const retries = acknowledged.reduce((sum, a) => sum + a.failed, 0);
console.log(`node-redis: ${bf} BF.MADD items and ${cf} CF.ADD checked; ${retries} failed attempts retried, the adds `
  + `after the kill took ${afterSeconds.toFixed(1)} s; first errors: ${JSON.stringify(errorsSeen)}`);
cluster.destroy();
if (failures.length > 0) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log(`all checks passed: node-redis ${bf} BF.MADD items and ${cf} CF.ADD acknowledged, in ${tags.length} `
  + `hashtags over ${masters.size} shards, all there after the leader on ${killed} was killed`);
process.exit(0);
