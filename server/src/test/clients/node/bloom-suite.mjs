// Bloomery client suite for node-redis with @redis/bloom: the module's own command helpers
// (client.bf / client.cf / client.cms / client.topK) against a server, over RESP2 or RESP3.
//
//   node bloom-suite.mjs --port 6380 --resp 3
//
// Every check prints "ok - name" or "FAIL - name: why"; the exit status is the number of failures
// (0 = all passed), 2 for a usage error. The suite flushes the server's keyspace first, so point it
// only at a throwaway server.
import assert from 'node:assert/strict';
import { createClient } from 'redis';

function usage(message) {
  console.error(`bloom-suite.mjs: ${message}\nusage: node bloom-suite.mjs --port PORT [--host HOST] [--resp 2|3]`);
  process.exit(2);
}

const args = process.argv.slice(2);
const opts = { host: '127.0.0.1', port: undefined, resp: 2 };
for (let i = 0; i < args.length; i += 2) {
  const value = args[i + 1];
  if (value === undefined) usage(`${args[i]} needs a value`);
  if (args[i] === '--port') opts.port = Number(value);
  else if (args[i] === '--host') opts.host = value;
  else if (args[i] === '--resp') opts.resp = Number(value);
  else usage(`unknown option ${args[i]}`);
}
if (!Number.isInteger(opts.port) || opts.port <= 0 || opts.port > 65535) usage('--port must be a TCP port');
if (opts.resp !== 2 && opts.resp !== 3) usage('--resp must be 2 or 3');

const client = createClient({
  socket: { host: opts.host, port: opts.port, reconnectStrategy: false, connectTimeout: 10000 },
  RESP: opts.resp,
});
client.on('error', (err) => console.error(`client error: ${err.message}`));

let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok - RESP${opts.resp} ${name}`);
  } catch (err) {
    failures++;
    console.log(`FAIL - RESP${opts.resp} ${name}: ${err && err.stack ? err.stack : err}`);
  }
}

async function rejects(promise, pattern) {
  await assert.rejects(promise, (err) => {
    assert.match(String(err.message), pattern);
    return true;
  });
}

// INFO replies: RESP2 helpers turn the flat array into an object; RESP3 maps arrive as objects too.
function field(info, name) {
  if (info instanceof Map) return info.get(name);
  return info[name];
}

// Every { iterator, chunk } of a SCANDUMP loop (chunks as Buffers), as clients copy a filter.
async function dumpChunks(kind, key) {
  const chunks = [];
  let iterator = 0;
  for (;;) {
    const reply = await client.withTypeMapping({ 36: Buffer })[kind].scanDump(key, iterator);
    iterator = Number(reply.iterator);
    if (iterator === 0) return chunks;
    chunks.push({ iterator, chunk: reply.chunk });
  }
}

await client.connect();
await client.flushAll();

await check('PING and ECHO', async () => {
  assert.equal(await client.ping(), 'PONG');
  assert.equal(await client.echo('hello'), 'hello');
});

await check('BF.RESERVE / ADD / EXISTS / MADD / MEXISTS / CARD', async () => {
  assert.equal(await client.bf.reserve('bf', 0.01, 1000), 'OK');
  assert.equal(await client.bf.add('bf', 'a'), true);
  assert.equal(await client.bf.add('bf', 'a'), false);
  assert.equal(await client.bf.exists('bf', 'a'), true);
  assert.equal(await client.bf.exists('bf', 'zzz'), false);
  assert.deepEqual(await client.bf.mAdd('bf', ['b', 'c', 'a']), [true, true, false]);
  assert.deepEqual(await client.bf.mExists('bf', ['a', 'b', 'c', 'nope']), [true, true, true, false]);
  assert.equal(await client.bf.card('bf'), 3);
  assert.equal(await client.bf.card('missing'), 0);
  assert.equal(await client.bf.exists('missing', 'a'), false);
});

await check('BF.RESERVE options and errors', async () => {
  assert.equal(await client.bf.reserve('ns', 0.01, 2, { NONSCALING: true }), 'OK');
  assert.equal(await client.bf.reserve('exp', 0.01, 10, { EXPANSION: 4 }), 'OK');
  await rejects(client.bf.reserve('ns', 0.01, 2), /item exists/);
  await rejects(client.bf.reserve('bad', 0, 100), /error rate must be in the range/);
  await rejects(client.bf.reserve('bad', 0.01, 0), /capacity must be in the range/);
  assert.equal(await client.exists('bad'), 0);
  assert.equal(await client.bf.add('ns', 'x'), true);
  assert.equal(await client.bf.add('ns', 'y'), true);
  await rejects(client.bf.add('ns', 'z'), /non scaling filter is full/);
});

await check('BF.INSERT and BF.INFO', async () => {
  assert.deepEqual(await client.bf.insert('ins', ['a', 'b'], { CAPACITY: 500, ERROR: 0.001, EXPANSION: 2 }),
    [true, true]);
  const info = await client.bf.info('ins');
  assert.equal(Number(field(info, 'Capacity')), 500);
  assert.equal(Number(field(info, 'Number of filters')), 1);
  assert.equal(Number(field(info, 'Number of items inserted')), 2);
  assert.equal(Number(field(info, 'Expansion rate')), 2);
  assert.ok(Number(field(info, 'Size')) > 0);
  await rejects(client.bf.insert('nocreate', ['a'], { NOCREATE: true }), /not found/);
  await rejects(client.bf.info('missing'), /not found/);
});

await check('BF.SCANDUMP / BF.LOADCHUNK round trip', async () => {
  await client.bf.reserve('src', 0.01, 100);
  await client.bf.mAdd('src', ['one', 'two', 'three']);
  const chunks = await dumpChunks('bf', 'src');
  assert.ok(chunks.length >= 2);
  for (const { iterator: it, chunk } of chunks) {
    assert.equal(await client.bf.loadChunk('copy', it, chunk), 'OK');
  }
  assert.deepEqual(await client.bf.mExists('copy', ['one', 'two', 'three']), [true, true, true]);
  assert.equal(await client.bf.card('copy'), 3);
});

await check('CF.RESERVE / ADD / ADDNX / EXISTS / COUNT / DEL', async () => {
  assert.equal(await client.cf.reserve('cf', 1000, { BUCKETSIZE: 4, MAXITERATIONS: 20, EXPANSION: 1 }), 'OK');
  assert.equal(await client.cf.add('cf', 'a'), true);
  assert.equal(await client.cf.add('cf', 'a'), true);
  assert.equal(await client.cf.addNX('cf', 'a'), false);
  assert.equal(await client.cf.addNX('cf', 'b'), true);
  assert.equal(await client.cf.count('cf', 'a'), 2);
  assert.equal(await client.cf.exists('cf', 'b'), true);
  assert.equal(await client.cf.exists('cf', 'zzz'), false);
  assert.deepEqual(await client.cf.mExists('cf', ['a', 'b', 'zzz']), [true, true, false]);
  assert.equal(await client.cf.del('cf', 'a'), true);
  assert.equal(await client.cf.count('cf', 'a'), 1);
  assert.equal(await client.cf.del('cf', 'zzz'), false);
  await rejects(client.cf.del('missing', 'a'), /Not found/);
  await rejects(client.cf.reserve('cf', 1000), /item exists/);
  await rejects(client.cf.reserve('small', 1), /Capacity must be in the range/);
});

await check('CF.INSERT / INSERTNX / INFO', async () => {
  assert.deepEqual(await client.cf.insert('ci', ['x', 'y'], { CAPACITY: 100 }), [true, true]);
  const nx = await client.cf.insertNX('ci', ['x', 'z']);
  assert.deepEqual(nx.map(Number), [0, 1]);
  await rejects(client.cf.insert('nocreate', ['a'], { NOCREATE: true }), /not found/);
  const info = await client.cf.info('ci');
  assert.equal(Number(field(info, 'Number of items inserted')), 3);
  assert.equal(Number(field(info, 'Number of filters')), 1);
  assert.equal(Number(field(info, 'Bucket size')), 2);
  assert.equal(Number(field(info, 'Number of buckets')), 64);
});

await check('CF.SCANDUMP / CF.LOADCHUNK round trip', async () => {
  await client.cf.reserve('csrc', 100);
  await client.cf.insert('csrc', ['p', 'q', 'r']);
  const chunks = await dumpChunks('cf', 'csrc');
  for (const { iterator: it, chunk } of chunks) {
    assert.equal(await client.cf.loadChunk('ccopy', it, chunk), 'OK');
  }
  assert.deepEqual(await client.cf.mExists('ccopy', ['p', 'q', 'r']), [true, true, true]);
});

await check('CMS.INITBYDIM / INITBYPROB / INCRBY / QUERY / MERGE / INFO', async () => {
  assert.equal(await client.cms.initByDim('c1', 1000, 5), 'OK');
  assert.equal(await client.cms.initByDim('c2', 1000, 5), 'OK');
  assert.equal(await client.cms.initByProb('p', 0.001, 0.01), 'OK');
  assert.deepEqual(await client.cms.incrBy('c1', [{ item: 'a', incrementBy: 3 }, { item: 'b', incrementBy: 1 }]), [3, 1]);
  assert.deepEqual(await client.cms.incrBy('c2', { item: 'a', incrementBy: 2 }), [2]);
  assert.deepEqual(await client.cms.query('c1', ['a', 'b', 'c']), [3, 1, 0]);
  assert.equal(await client.cms.initByDim('dest', 1000, 5), 'OK');
  assert.equal(await client.cms.merge('dest', ['c1', 'c2']), 'OK');
  assert.deepEqual(await client.cms.query('dest', ['a', 'b']), [5, 1]);
  assert.equal(await client.cms.merge('dest', [{ name: 'c1', weight: 2 }, { name: 'c2', weight: 10 }]), 'OK');
  assert.deepEqual(await client.cms.query('dest', ['a']), [26]);
  const info = await client.cms.info('p');
  assert.equal(Number(field(info, 'width')), 2000);
  assert.equal(Number(field(info, 'depth')), 7);
  assert.equal(Number(field(info, 'count')), 0);
  await rejects(client.cms.query('missing', ['a']), /CMS: key does not exist/);
  await rejects(client.cms.initByDim('c1', 10, 2), /CMS: key already exists/);
});

await check('TOPK.RESERVE / ADD / INCRBY / QUERY / COUNT / LIST / INFO', async () => {
  assert.equal(await client.topK.reserve('tk', 2, { width: 1000, depth: 5, decay: 0.9 }), 'OK');
  assert.deepEqual(await client.topK.add('tk', ['a', 'a', 'a', 'b']), [null, null, null, null]);
  assert.deepEqual(await client.topK.incrBy('tk', { item: 'c', incrementBy: 2 }), ['b']);
  assert.deepEqual(await client.topK.query('tk', ['a', 'b', 'c']), [true, false, true]);
  assert.deepEqual(await client.topK.count('tk', ['a', 'c']), [3, 2]);
  assert.deepEqual(await client.topK.list('tk'), ['a', 'c']);
  assert.deepEqual(await client.topK.listWithCount('tk'), [{ item: 'a', count: 3 }, { item: 'c', count: 2 }]);
  const info = await client.topK.info('tk');
  assert.equal(Number(field(info, 'k')), 2);
  assert.equal(Number(field(info, 'width')), 1000);
  assert.equal(Number(field(info, 'depth')), 5);
  assert.equal(Number(field(info, 'decay')), 0.9);
  await rejects(client.topK.reserve('tk', 2), /TopK: key already exists/);
  await rejects(client.topK.list('missing'), /TopK: key does not exist/);
});

await check('WRONGTYPE across kinds', async () => {
  await rejects(client.bf.add('cf', 'x'), /^WRONGTYPE Operation against a key holding the wrong kind of value/);
  await rejects(client.cf.add('bf', 'x'), /^WRONGTYPE/);
  assert.equal(await client.bf.exists('cf', 'x'), false);
});

await check('MULTI / EXEC transaction', async () => {
  const replies = await client.multi()
    .bf.add('tx', 'a')
    .bf.add('tx', 'a')
    .bf.exists('tx', 'a')
    .cf.add('txcf', 'q')
    .exec();
  assert.deepEqual(replies.map((r) => (typeof r === 'boolean' ? r : Number(r) === 1)), [true, false, true, true]);
  assert.equal(await client.bf.card('tx'), 1);
});

await check('pipelined commands (auto-pipelining of concurrent calls)', async () => {
  const items = Array.from({ length: 200 }, (_, i) => `url:${i}`);
  await client.bf.reserve('pipe', 0.001, 1000);
  const added = await Promise.all(items.map((item) => client.bf.add('pipe', item)));
  assert.equal(added.filter((x) => x === true).length, 200);
  const present = await Promise.all(items.map((item) => client.bf.exists('pipe', item)));
  assert.ok(present.every((x) => x === true));
  assert.equal(await client.bf.card('pipe'), 200);
});

await check('generic keyspace commands', async () => {
  assert.ok(await client.dbSize() > 0);
  assert.equal(await client.type('bf'), 'MBbloom--');
  assert.equal(await client.expire('bf', 100), 1);
  assert.ok((await client.ttl('bf')) > 0);
  assert.equal(await client.del('bf'), 1);
  assert.equal(await client.exists('bf'), 0);
});

await client.flushAll();
await client.quit();
console.log(failures === 0 ? `all checks passed (RESP${opts.resp})` : `${failures} check(s) failed (RESP${opts.resp})`);
process.exit(failures);
