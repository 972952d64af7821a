import net from 'node:net';

const handedOut = new Set<number>();

/**
 * A loopback port nobody listens on, below the kernel's ephemeral range (32768 and up), so an
 * outgoing connection cannot take it between this check and the listen; never the same one twice.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
