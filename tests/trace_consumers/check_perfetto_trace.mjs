// Checks `ipusim export -o out.pftrace` against the Chrome JSON export of the
// same profile: Perfetto's protobuf decoded here (a small wire-format reader,
// independent of the C++ encoder), then
//   - every track's SLICE_BEGIN/SLICE_END balanced, as Perfetto nests them;
//   - the same slices as the JSON: thread, name, start and length in cycles
//     (from the debug annotations ts_cycles/dur_cycles, and from the JSON's
//     exact times);
//   - every timestamp the export's rule of its cycles: round(cycles * 1e9 /
//     clock_hz) ns, halves away from zero;
//   - the same number of counter samples.
// Usage: node check_perfetto_trace.mjs TRACE.pftrace TRACE.json CLOCK_HZ
// Prints one line per check and "N passed, M failed"; exits 1 on a failure.
import fs from 'node:fs';

const [pftracePath, jsonPath, clockText] = process.argv.slice(2);
if (!pftracePath || !jsonPath || !clockText) {
  console.error('usage: node check_perfetto_trace.mjs TRACE.pftrace TRACE.json CLOCK_HZ');
  process.exit(2);
}
const clockHz = Number(clockText);
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) ++passed; else ++failed;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

// Protobuf wire format: [{field, value (BigInt) | bytes (Buffer)}].
function decode(buffer) {
  const fields = [];
  let at = 0;
  const varint = () => {
    let value = 0n, shift = 0n;
    for (;;) {
      if (at >= buffer.length) throw new Error(`${pftracePath}: truncated varint at byte ${at}`);
      const byte = buffer[at++];
      value |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = varint();
    const field = Number(key >> 3n), type = Number(key & 7n);
    if (type === 0) fields.push({field, value: varint()});
    else if (type === 1) { fields.push({field, value: buffer.readBigUInt64LE(at), bytes: buffer.subarray(at, at + 8)}); at += 8; }
    else if (type === 2) { const n = Number(varint()); fields.push({field, bytes: buffer.subarray(at, at + n)}); at += n; }
    else throw new Error(`${pftracePath}: wire type ${type} at byte ${at}`);
  }
  return fields;
}
const get = (fields, n) => fields.find(f => f.field === n);
const signed = v => BigInt.asIntN(64, v);

const hz = BigInt(Math.round(clockHz));
const nsOf = cycles => {  // round(cycles * 1e9 / hz), halves away from zero
  const scaled = BigInt(cycles) * 1000000000n, magnitude = scaled < 0n ? -scaled : scaled;
  const rounded = (2n * magnitude + hz) / (2n * hz);
  return scaled < 0n ? -rounded : rounded;
};

const trackNames = new Map();
const open = new Map();
const fromPerfetto = [];
let counters = 0, unbalanced = 0, offRule = 0;
for (const packetField of decode(fs.readFileSync(pftracePath))) {
  const packet = decode(packetField.bytes);
  const descriptor = get(packet, 60);
  if (descriptor) {
    const d = decode(descriptor.bytes);
    if (get(d, 2)) trackNames.set(get(d, 1).value, get(d, 2).bytes.toString('utf8'));
    continue;
  }
  const eventField = get(packet, 11);
  if (!eventField) continue;
  const ts = get(packet, 8).value;
  const ev = decode(eventField.bytes);
  const type = Number(get(ev, 9).value), track = get(ev, 11).value;
  if (type === 4) { ++counters; continue; }
  if (!open.has(track)) open.set(track, []);
  if (type === 2) {
    const s = open.get(track).pop();
    if (!s) { ++unbalanced; continue; }
    if (ts !== nsOf(s.ts + s.dur)) ++offRule;
    fromPerfetto.push(s);
    continue;
  }
  const ints = {};
  for (const a of ev.filter(f => f.field === 4)) {
    const annotation = decode(a.bytes);
    if (get(annotation, 4)) ints[get(annotation, 10).bytes.toString('utf8')] = Number(signed(get(annotation, 4).value));
  }
  const s = {thread: trackNames.get(track), name: get(ev, 23).bytes.toString('utf8'), ts: ints.ts_cycles, dur: ints.dur_cycles};
  if (ts !== nsOf(s.ts)) ++offRule;
  if (type === 1) open.get(track).push(s); else fromPerfetto.push(s);
}
for (const stack of open.values()) unbalanced += stack.length;
check(unbalanced === 0, `Perfetto: ${unbalanced} unbalanced SLICE_BEGIN/SLICE_END`);
check(offRule === 0, `Perfetto: ${offRule} timestamps off round(cycles * 1e9 / clock_hz)`);

const trace = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const offsetUs = trace.otherData?.ts_offset_us ?? 0;
const threads = new Map();
for (const e of trace.traceEvents)
  if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
const toCycles = us => Math.round(us * clockHz / 1e6);
const fromJson = trace.traceEvents.filter(e => e.ph === 'X' || e.ph === 'I').map(e => ({
  thread: threads.get(`${e.pid}:${e.tid}`), name: e.name, ts: toCycles(e.ts - offsetUs), dur: e.ph === 'X' ? toCycles(e.dur) : 0}));
const key = s => `${s.thread}\u0000${s.name}\u0000${s.ts}\u0000${s.dur}`;
const a = fromPerfetto.map(key).sort(), b = fromJson.map(key).sort();
const firstDiff = a.findIndex((k, i) => k !== b[i]);
check(a.length === b.length && firstDiff < 0,
      `Perfetto: ${a.length} slices, the JSON's ${b.length}, the same threads, names and cycles` +
      (firstDiff >= 0 ? ` (first difference: ${JSON.stringify(a[firstDiff])} vs ${JSON.stringify(b[firstDiff])})` : ''));
const jsonCounters = trace.traceEvents.filter(e => e.ph === 'C').length;
check(counters === jsonCounters, `Perfetto: ${counters} counter samples, the JSON's ${jsonCounters}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
