import t from 'tap';
import { PeriodicPass } from '../../../src/scheduler/periodic-pass.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('passes start after the first delay, repeat after each pass ends, and never overlap', async (t) => {
  let running = 0;
  let overlapped = false;
  const starts: number[] = [];
  const began = Date.now();
  const passes = new PeriodicPass(async () => {
    running += 1;
    if (running > 1) overlapped = true;
    starts.push(Date.now() - began);
    await sleep(30);
    running -= 1;
  });
  passes.start(20, 10);
  t.ok(passes.active);
  await sleep(200);
  await passes.stop();
  t.notOk(passes.active);
  t.notOk(overlapped, 'a pass never starts while another runs');
  t.ok(starts.length >= 2, `several passes ran (${starts.length})`);
  t.ok(starts[0]! >= 15, `the first pass waited for its delay (${starts[0]} ms)`);
  for (let i = 1; i < starts.length; i++) t.ok(starts[i]! - starts[i - 1]! >= 35, 'the next pass waits for the interval after the previous one ended');
  const count = starts.length;
  await sleep(60);
  t.equal(starts.length, count, 'no pass after stop');
});

t.test('stop waits for the pass in progress; a failing pass does not end the passes', async (t) => {
  let calls = 0;
  let finished = false;
  const passes = new PeriodicPass(async () => {
    calls += 1;
    if (calls === 1) throw new Error('first pass fails');
    await sleep(50);
    finished = true;
  });
  passes.start(0, 5);
  await sleep(25);
  t.ok(calls >= 2, 'a second pass followed the failed one');
  await passes.stop();
  t.ok(finished, 'stop resolved only after the running pass finished');
});

t.test('start twice schedules once', async (t) => {
  let calls = 0;
  const passes = new PeriodicPass(async () => void (calls += 1));
  passes.start(10, 1_000);
  passes.start(10, 1_000);
  await sleep(50);
  await passes.stop();
  t.equal(calls, 1);
});
