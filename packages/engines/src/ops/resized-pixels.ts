import type { Texture } from '@gltf-transform/core'
import type { SharpEncoder } from './texture-optimize.ts'
import { sharpInputOptions, type TextureLimits } from './texture-limits.ts'

/** An image's decoded 8-bit pixels, as sharp's `raw()` gives them. */
export interface RawPixels {
  data: Uint8Array
  width: number
  height: number
  channels: 1 | 2 | 3 | 4
}

/**
 * The pixels compress's `texture_max_size` resized, per texture whose resize was lossy (JPEG, lossy
 * WebP), held for `texture_format`'s encoder: it encodes them once instead of decoding the resize's
 * quality-90 coding (two generations of loss). The texture itself keeps that coding, which every step
 * in between reads and which `texture_format`'s "never larger" compares with.
 */
export type ResizedPixels = Map<Texture, RawPixels>

/** An image to encode: its encoded bytes, or pixels held decoded. */
export type ImageSource = Uint8Array | RawPixels

/**
 * A sharp pipeline reading `source`: encoded bytes within the texture limits, or raw pixels.
 *
 * ```ts
 * const webp = await openImage(sharp, pixels, {}).webp({ quality: 82 }).toBuffer()
 * ```
 */
export function openImage(encoder: SharpEncoder, source: ImageSource, limits: TextureLimits): ReturnType<SharpEncoder> {
  if (source instanceof Uint8Array) return encoder(source, sharpInputOptions(limits))
  const { data, width, height, channels } = source
  return encoder(data, { ...sharpInputOptions(limits), raw: { width, height, channels } })
}

/**
 * What a texture report says of a texture encoded from its held resized pixels, naming the coding it
 * was not decoded from (by MIME type: a resize keeps pixels of JPEG and lossy WebP textures only).
 */
export function resizedPixelsNote(mime: string): string {
  const coding = mime === 'image/webp' ? 'WebP' : 'JPEG'
  return `encoded once from the pixels texture_max_size resized, not from the ${coding} it wrote of them`
}
