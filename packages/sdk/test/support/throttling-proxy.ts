import { createServer, connect, type Socket } from 'node:net'

/** Options of `startThrottlingProxy`. */
export interface ThrottlingProxyOptions {
  /** Pace of the client → server direction (the upload), in bytes a second. */
  bytesPerSecond: number
  /**
   * Pace only this many bytes of each connection's upload; the rest goes as fast as the server
   * reads it (default: all paced). On loopback the kernel holds several MB of a client's request
   * (a 64 KB segment size), which a slow link would drain for seconds after the client's last write.
   */
  pacedBytes?: number
  /** Forward only this many bytes of each connection's upload, then nothing more (a stalled link). */
  stallAfterBytes?: number
}

/** A loopback TCP proxy in front of `target`: what a slow or stalling uplink looks like to a client. */
export interface ThrottlingProxy {
  /** The proxy's address, to use as the client's base URL. */
  url: string
  /**
   * Connections that carried a request: one per attempt. (undici may open a spare connection that
   * never sends a byte; those are not counted.)
   */
  readonly requests: number
  close(): Promise<void>
}

/**
 * Starts a proxy that forwards the upload at a fixed byte rate and the answers as they come. It
 * reads from the client only as fast as it forwards (the client's socket is paused meanwhile), so
 * the client's sending is held back as on a slow link, within what the kernel buffers.
 */
export async function startThrottlingProxy(target: string, options: ThrottlingProxyOptions): Promise<ThrottlingProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  let requests = 0
  const server = createServer((client) => {
    client.once('data', () => requests++)
    const upstream = connect(Number(port), hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      // Either side gone ends the other: a client that gave up closes its upload on the server too.
      socket.on('error', () => undefined)
      socket.on('close', () => (socket === client ? upstream : client).destroy())
    }
    upstream.on('data', (chunk) => client.write(chunk))
    const started = Date.now()
    let forwarded = 0
    client.on('data', (chunk: Buffer) => {
      // Read no more from the client until this chunk's time on the paced link has passed.
      client.pause()
      const room = options.stallAfterBytes === undefined ? chunk.byteLength : options.stallAfterBytes - forwarded
      if (room <= 0) return // stalled: nothing more is forwarded, nor read from the client
      const drained = new Promise<void>((resolve) => {
        if (upstream.write(chunk.subarray(0, room))) resolve()
        else upstream.once('drain', resolve)
      })
      forwarded += Math.min(room, chunk.byteLength)
      const paced = Math.min(forwarded, options.pacedBytes ?? Infinity)
      const due = new Promise<void>((resolve) => setTimeout(resolve, started + (paced / options.bytesPerSecond) * 1000 - Date.now()))
      // Also no faster than the server reads, so that nothing piles up inside the proxy.
      void Promise.all([drained, due]).then(() => client.resume())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    get requests() {
      return requests
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
