// A loopback HTTP server (127.0.0.1, port 0) that serves files the way a model host does: Range requests answered
// with 206, a 404 for unknown paths, and faults a test asks for (a connection cut after some bytes).
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface ServedRequest {
  path: string;
  /** The Range header, when the client sent one. */
  range: string | undefined;
}

export interface FileRoute {
  /** File streamed from disk (never read into memory whole). */
  file?: string;
  /** Body given in full instead of a file. */
  body?: Buffer;
  contentType?: string;
  /** Cut the connection (destroy the socket) after this many body bytes of the first `cutTimes` responses. */
  cutAfterBytes?: number;
  cutTimes?: number;
  /** Answer with a redirect to this path instead. */
  redirectTo?: string;
}

export interface FileHttpServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: ServedRequest[];
  close(): Promise<void>;
}

export async function startFileHttpServer(routes: Record<string, FileRoute>): Promise<FileHttpServer> {
  const requests: ServedRequest[] = [];
  const cuts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    requests.push({ path, range: request.headers.range });
    const route = routes[path];
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    if (route.redirectTo !== undefined) {
      response.writeHead(302, { location: route.redirectTo }).end();
      return;
    }
    const size = route.file !== undefined ? statSync(route.file).size : (route.body as Buffer).length;
    const match = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    const start = match ? Number(match[1]) : 0;
    if (start >= size && match) {
      response.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    const headers: Record<string, string | number> = { 'content-type': route.contentType ?? 'application/octet-stream', 'content-length': size - start, 'accept-ranges': 'bytes' };
    if (match) headers['content-range'] = `bytes ${start}-${size - 1}/${size}`;
    response.writeHead(match ? 206 : 200, headers);
    const cutSoFar = cuts.get(path) ?? 0;
    const cut = route.cutAfterBytes !== undefined && cutSoFar < (route.cutTimes ?? 1);
    const end = cut ? Math.min(size, start + (route.cutAfterBytes as number)) - 1 : size - 1;
    if (cut) cuts.set(path, cutSoFar + 1);
    const stream = route.file !== undefined ? createReadStream(route.file, { start, end }) : Readable.from([(route.body as Buffer).subarray(start, end + 1)]);
    stream.pipe(response, { end: !cut });
    // The cut: what was sent so far may or may not reach the client; the rest never comes.
    if (cut) stream.on('end', () => response.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
