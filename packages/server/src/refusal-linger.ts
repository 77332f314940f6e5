/**
 * After a refusal, body bytes read and dropped, and the longest time spent draining them, before
 * the connection is let go (lingering close): enough for a client to finish sending a refused
 * upload of a few times the common limits on a LAN, small enough that a refused request costs a
 * bounded read. The Node listener and the Worker entry both drain by these figures.
 */
export const REFUSAL_LINGER = { bytes: 64 * 1024 * 1024, ms: 10_000 } as const
