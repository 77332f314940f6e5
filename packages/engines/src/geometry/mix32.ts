/**
 * murmur3's finalizer: every bit of `h` moved into every bit of the result. The open-addressing tables
 * take a hash's low bits, and the keys they hash (vertex numbers, float bit patterns of grid or round
 * coordinates) differ mostly in their high or last bits: unmixed, neighbours land in neighbouring
 * slots and linear probing walks long runs.
 */
export function mix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}
