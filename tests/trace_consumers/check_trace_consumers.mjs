// Runs two real consumers of ipusim's Chrome-trace export on one trace and
// checks what they read:
//   - the Chrome DevTools performance panel's trace engine
//     (@paulirish/trace_engine): every "X" and "i" event of each thread is in
//     its tree (treify drops an event that overlaps its parent's end);
//   - speedscope's importer (the function its app calls for Trace Event
//     Format files, taken from the npm package's bundle): no "Tried to end"
//     warning, one frame per slice name, and each frame's total time the
//     sum of its events' durations, exactly (speedscope merges a frame
//     with the same frame right after it, so calls are not counted);
//   - both read every captured Engine::run and Step with the profile's
//     duration: the microseconds they read convert back to the exact cycles,
//     round(us * clock_hz / 1e6) (profiler/analysis/chrome_trace_time.hpp).
// Usage: node check_trace_consumers.mjs TRACE.json EXPECTED.json
// EXPECTED: {"clock_hz": N, "runs": [[start, end], ...], "steps": [[start, end], ...]}
// in cycles, in time order (the captured runs and every step slice).
// Prints one line per figure and "N passed, M failed"; exits 1 on a failure.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [tracePath, expectedPath] = process.argv.slice(2);
if (!tracePath || !expectedPath) {
  console.error('usage: node check_trace_consumers.mjs TRACE.json EXPECTED.json');
  process.exit(2);
}
const trace = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8'));

let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) ++passed; else ++failed;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

const expectedCycles = spans => spans.map(([start, end]) => end - start);
const toCycles = micros => Math.round(micros * expected.clock_hz / 1e6);
// The export's times are whole multiples of 1/ts_units_per_us us: sums of them are exact.
const unitsPerUs = trace.otherData?.ts_units_per_us ?? 4096;
function sameDurations(name, consumer, read, wanted) {
  const firstDiff = wanted.findIndex((w, i) => read[i] !== w);
  check(read.length === wanted.length && firstDiff < 0,
        `${consumer}: ${read.length} ${name} read, ${wanted.length} expected, durations equal` +
        (firstDiff >= 0 ? ` (first difference: #${firstDiff}: ${read[firstDiff]} cycles read, ${wanted[firstDiff]} expected)` : ''));
}

const events = trace.traceEvents;
const threadNames = new Map();
for (const e of events)
  if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(`${e.pid}:${e.tid}`, e.args.name);
const sliceEvents = events.filter(e => e.ph === 'X' || e.ph === 'I');
const completeEvents = events.filter(e => e.ph === 'X');
// The Engine track: the thread of the Engine::run slices.
const isRun = name => name.startsWith('Engine::run #');
const isStep = name => name.startsWith('Step ');
const engineEvent = completeEvents.find(e => isRun(e.name));
const engineKey = engineEvent && `${engineEvent.pid}:${engineEvent.tid}`;
check(engineKey !== undefined, `the trace has Engine::run slices (thread "${threadNames.get(engineKey)}")`);
const runCycles = expectedCycles(expected.runs), stepCycles = expectedCycles(expected.steps);

// --- The DevTools trace engine.
async function devtools() {
  polyfillDOMRect();
  // Debian 12's Node 18 lacks Array.prototype.toSorted (Node 20), which an insight of the engine calls.
  if (!Array.prototype.toSorted)
    Object.defineProperty(Array.prototype, 'toSorted', {value(compare) { return [...this].sort(compare); }});
  const Trace = await import(path.join(here, 'node_modules/@paulirish/trace_engine/models/trace/trace.js'));
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const parsed = model.parsedTrace();
  const renderer = parsed.data.Renderer;
  let entries = 0, inTree = 0;
  let engineThread = null;
  for (const [pid, proc] of renderer.processes)
    for (const [tid, thread] of proc.threads) {
      entries += thread.entries.length;
      inTree += thread.entries.filter(e => renderer.entryToNode.has(e)).length;
      if (`${pid}:${tid}` === engineKey) engineThread = thread;
    }
  check(entries === sliceEvents.length, `DevTools: ${entries} of ${sliceEvents.length} slice events on its threads`);
  check(inTree === entries, `DevTools: ${entries - inTree} events dropped from the tree (overlapping their parent)`);
  const roots = engineThread ? [...engineThread.tree.roots] : [];
  const runs = roots.filter(n => isRun(n.entry.name));
  const steps = runs.flatMap(n => n.children.filter(c => isStep(c.entry.name)));
  sameDurations('Engine::run', 'DevTools', runs.map(n => toCycles(n.entry.dur)), runCycles);
  sameDurations('Step', 'DevTools', steps.map(n => toCycles(n.entry.dur)), stepCycles);
}

// --- speedscope's importer, out of the app's bundle.
function speedscopeImporter() {
  const dir = path.join(here, 'node_modules/speedscope/dist/release');
  const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f));
  let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
  const importer = /Importing as Trace Event Format profile"\),([A-Za-z_$][\w$]*)\(/.exec(src);
  const appStart = src.lastIndexOf('console.log(`speedscope v');
  if (!importer || appStart < 0) throw new Error(`speedscope bundle ${bundle}: importer not found (a new version?)`);
  // Everything but the app's start, then the importer made reachable.
  src = src.slice(0, appStart) + `globalThis.__importTraceEvents=${importer[1]};})();`;
  const anything = () => new Proxy(function() {}, {
    get: (t, key) => key === Symbol.toPrimitive ? () => '' : anything(),
    apply: () => anything(), construct: () => anything()});
  const context = {console, URL, TextDecoder, TextEncoder, setTimeout, clearTimeout};
  context.window = context;
  context.self = context;
  for (const name of ['document', 'navigator', 'location', 'localStorage', 'requestAnimationFrame', 'matchMedia',
                      'addEventListener', 'devicePixelRatio', 'Worker', 'Blob', 'performance', 'history'])
    context[name] = anything();
  vm.createContext(context);
  vm.runInContext(src, context);
  return context.__importTraceEvents;
}

function speedscope() {
  const importTraceEvents = speedscopeImporter();
  const warnings = [];
  const saved = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
  let group;
  try { group = importTraceEvents(trace); } finally { console.warn = saved; }
  const nesting = warnings.filter(w => w.includes('Tried to end'));
  check(nesting.length === 0, `speedscope: ${nesting.length} nesting warnings` + (nesting.length ? ` (first: ${nesting[0]})` : ''));
  const framesByName = new Map();
  const weightByName = new Map();  // "pid:tid name" -> cycles
  let runs = [], steps = [];
  for (const profile of group.profiles) {
    const open = [];
    let isEngine = false;
    profile.forEachFrame(frame => { if (isRun(frame.name)) isEngine = true; });
    profile.forEachCall((node, at) => { open.push(at); }, (node, at) => {
      const start = open.pop();
      const name = node.frame.name;
      if (isEngine && isRun(name)) runs.push([start, at]);
      if (isEngine && isStep(name)) steps.push([start, at]);
    });
    profile.forEachFrame(frame => {
      if (!framesByName.has(frame.name)) framesByName.set(frame.name, new Set());
      framesByName.get(frame.name).add(frame.key);
      const key = `${profile.getName()}\u0000${frame.name}`;
      weightByName.set(key, (weightByName.get(key) ?? 0) + frame.getTotalWeight() * unitsPerUs);
    });
  }
  // The same sums from the file, per thread and name; an event inside one of
  // the same name (a program step named as its sequence) is in its total
  // already, as speedscope counts a frame's time once.
  const fileWeights = new Map();
  const byThread = new Map();
  for (const e of completeEvents) {
    const thread = `${e.pid}:${e.tid}`;
    if (!byThread.has(thread)) byThread.set(thread, []);
    byThread.get(thread).push({name: e.name, ts: e.ts * unitsPerUs, end: (e.ts + e.dur) * unitsPerUs});
  }
  for (const [thread, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts || b.end - a.end);
    const open = [];
    for (const e of list) {
      while (open.length && open.at(-1).end <= e.ts) open.pop();
      if (!open.some(o => o.name === e.name)) {
        const key = `${thread}\u0000${e.name}`;
        fileWeights.set(key, (fileWeights.get(key) ?? 0) + (e.end - e.ts));
      }
      open.push(e);
    }
  }
  const fileTotals = [...fileWeights.values()].sort((a, b) => a - b);
  const readTotals = [...weightByName.values()].sort((a, b) => a - b);
  const mismatch = fileTotals.length !== readTotals.length || fileTotals.some((w, i) => readTotals[i] !== w);
  check(!mismatch, `speedscope: ${readTotals.length} frames' total times equal the file's ${fileTotals.length} sums per thread and name`);
  const split = [...framesByName].filter(([, keys]) => keys.size > 1).map(([name]) => name);
  check(split.length === 0, `speedscope: every slice name is one frame` + (split.length ? ` (split: ${split.slice(0, 3)})` : ''));
  const byStart = (a, b) => a[0] - b[0];
  sameDurations('Engine::run', 'speedscope', runs.sort(byStart).map(([s, e]) => toCycles(e - s)), runCycles);
  sameDurations('Step', 'speedscope', steps.sort(byStart).map(([s, e]) => toCycles(e - s)), stepCycles);
}

function polyfillDOMRect() {
  if (globalThis.DOMRect) return;
  globalThis.DOMRect = class DOMRect {
    constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
    get left() { return Math.min(this.x, this.x + this.width); }
    get right() { return Math.max(this.x, this.x + this.width); }
    get top() { return Math.min(this.y, this.y + this.height); }
    get bottom() { return Math.max(this.y, this.y + this.height); }
  };
}

const earliest = Math.min(...events.filter(e => e.ph !== 'M').map(e => e.ts));
check(earliest > 0, `no event but metadata at ts 0 (earliest ${earliest} us)`);
await devtools();
speedscope();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
