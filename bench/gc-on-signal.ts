/**
 * Preloaded into benchmark child processes started with --expose-gc: SIGUSR2 runs a full garbage
 * collection and writes process.memoryUsage() to BENCH_MEMORY_FILE, so memory readings compare
 * live memory rather than collection timing.
 */
import { writeFileSync } from 'node:fs';

const gc = (globalThis as { gc?: () => void }).gc;
const file = process.env.BENCH_MEMORY_FILE;
if (gc && file) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
