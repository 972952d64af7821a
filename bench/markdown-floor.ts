/**
 * The Markdown floor: plain CommonMark through remark-parse → remark-rehype → rehype-stringify, no Zulip syntax,
 * no transforms, no sanitizing. Run as a worker thread by bench/markdown.ts, so that an input plain remark cannot
 * handle (it recurses per nesting level, and some nestings take it seconds) is cut off instead of stalling the run.
 */
import { parentPort } from 'node:worker_threads';
import rehypeStringify from 'rehype-stringify';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';

export interface FloorRequest {
  inputs: string[];
  /** Renders per input. */
  runs: number;
}
/** Per input, per run: CPU and wall milliseconds; error when plain remark throws (e.g. a stack overflow). */
export interface FloorReply {
  cpu: number[][];
  wall: number[][];
  error?: string;
}

const processor = unified().use(remarkParse).use(remarkRehype).use(rehypeStringify).freeze();

parentPort?.on('message', ({ inputs, runs }: FloorRequest) => {
  const reply: FloorReply = { cpu: [], wall: [] };
  try {
    for (const input of inputs) {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < runs; i++) {
        const cpuStart = process.cpuUsage();
        const started = performance.now();
        processor.processSync(input);
        wall.push(performance.now() - started);
        const used = process.cpuUsage(cpuStart);
        cpu.push((used.user + used.system) / 1000);
      }
      reply.cpu.push(cpu);
      reply.wall.push(wall);
    }
  } catch (error) {
    reply.error = error instanceof Error ? error.message : String(error);
  }
  parentPort?.postMessage(reply);
});
// Loaded: the caller starts its clock only now.
parentPort?.postMessage('ready');
