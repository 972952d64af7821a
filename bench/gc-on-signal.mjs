/**
 * Preloaded into benchmark child processes started with --expose-gc: SIGUSR2 runs a full garbage
 * collection and writes process.memoryUsage() to BENCH_MEMORY_FILE, so memory readings compare
 * live memory rather than collection timing. Plain JavaScript, so that the compiled server (which
 * runs without the TypeScript loader) can preload it too.
 */
import { writeFileSync } from 'node:fs';

const gc = globalThis.gc;
const file = process.env.BENCH_MEMORY_FILE;
if (gc && file) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
