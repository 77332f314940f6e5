import { batchSubmitResponseSchema, ERROR_TEXTS } from '@mos/sdk/contract'
import sharp from 'sharp'
import { formatMb } from '../src/uploads/read-upload.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { activeLimits, cappedTierLimits } from '../src/limits/active-limits.ts'
import { form, inProcessApp, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { testVendor } from './support/licensing.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'), // 1.75 MB
  knight: shared('glb', 'chr_knight.glb'),
})
const MB = 1024 * 1024

describe.skipIf(!available).each(VARIANTS)('limits of a small licence tier in variant %s', (variant) => {
  const vendor = testVendor()
  const limitStatus = variant === 'A' ? 413 : 402
  let dir: Awaited<ReturnType<typeof tempDir>>
  let service: ReturnType<typeof inProcessApp>

  beforeAll(async () => {
    dir = await tempDir()
    const key = vendor.issue({ tier: 'standard', limits: { max_file_size_mb: 1, max_batch_count: 2, max_texture_size_mb: 1 } })
    service = inProcessApp(testEnv(variant, dir.path, { SERVICE__LICENSE__PUBLIC_KEY: vendor.publicKeyBase64, SERVICE__LICENSE__KEY: key }))
  })
  afterAll(async () => {
    await service.close()
    await dir.remove()
  })

  const compress = async (file: string) =>
    service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [file]) })
  const batch = async (files: string[]) =>
    service.call('/api/v1/batch/compress', { method: 'POST', body: await form({ engine: 'draco' }, files, 'files') })

  it('reports the tier limits it enforces', async () => {
    const info = await (await service.call('/api/v1/license/info')).json()
    if (variant === 'A') expect(info.limits).toEqual({ max_file_size_mb: 1, max_batch_count: 2, max_texture_size_mb: 1 })
    else expect(info).toMatchObject({ authorized: true, tier: 1 })
    expect(service.context.limits()).toEqual({ maxFileBytes: MB, maxBatchCount: 2, maxTextureBytes: MB })
  })

  // A body of unknown length (as here, in-process) is read a chunk past 1.25× the limit: in-process the
  // 1.75 MB file comes whole in one chunk, its end is seen, and the text gives its real size.
  const cutText = { error: ERROR_TEXTS.fileTooLarge(1.8, 1) }

  it('refuses a file over the tier size limit with the exact text', async () => {
    const response = await compress(paths.engine)
    expect(response.status).toBe(limitStatus)
    expect(await response.json()).toEqual(cutText)
    expect((await compress(paths.knight)).status).toBe(200)
  })

  it('refuses a batch over the tier count with the exact text', async () => {
    const response = await batch([paths.box, paths.knight, paths.box])
    expect(response.status).toBe(limitStatus)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.batchTooLarge(2) })
    const fits = await batch([paths.box, paths.knight])
    expect(fits.status).toBe(200)
    expect(batchSubmitResponseSchema.parse(await fits.json()).total).toBe(2)
  })

  it('applies the size limit to each file of a batch', async () => {
    const response = await batch([paths.box, paths.engine])
    expect(response.status).toBe(limitStatus)
    expect(await response.json()).toEqual(cutText)
  })
})

describe.skipIf(!available).each(VARIANTS)('texture size limit in variant %s', (variant) => {
  it('applies the tier texture limit to a standalone image with its own text, and per image inside models', async () => {
    const vendor = testVendor()
    const dir = await tempDir()
    const key = vendor.issue({ tier: 'standard', limits: { max_file_size_mb: 10, max_texture_size_mb: 1 } })
    const service = inProcessApp(
      testEnv(variant, dir.path, { SERVICE__LICENSE__PUBLIC_KEY: vendor.publicKeyBase64, SERVICE__LICENSE__KEY: key }),
    )
    // Noise does not compress: an 800×800 RGB PNG is about 1.8 MB.
    const noise = Buffer.from(Array.from({ length: 800 * 800 * 3 }, (_, i) => (i * 2654435761) >>> 24))
    const png = new Uint8Array(
      await sharp(noise, { raw: { width: 800, height: 800, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer(),
    )
    const post = async (path: string, file: NonNullable<Parameters<typeof form>[1]>[number]) => {
      await service.context.access.licensing.refresh()
      return service.call(path, { method: 'POST', body: await form({ format: 'webp' }, [file]) })
    }
    try {
      const refused = await post('/api/v1/textures/optimize', { name: 'noise.png', bytes: png })
      expect(refused.status).toBe(variant === 'A' ? 413 : 402)
      expect(await refused.json()).toEqual({ error: ERROR_TEXTS.textureTooLarge(formatMb(png.byteLength), 1) })
      // A model is not one texture: a 1.8 MB model with small textures is accepted and processed.
      const accepted = await post('/api/v1/textures/optimize', paths.engine)
      expect(accepted.status).toBe(200)
      const record = await waitForTask((p) => service.call(p), (await accepted.json()).task_id)
      expect(record.status).toBe('completed')
    } finally {
      await service.close()
      await dir.remove()
    }
  })
})

describe('active limits', () => {
  const config = { maxFileSizeMb: 500 }
  it('says in the licence documents the limits the routes enforce: the tier capped by the operator', () => {
    expect(cappedTierLimits({ max_file_size_mb: -1, max_batch_count: -1, max_texture_size_mb: -1 }, config)).toEqual({
      max_file_size_mb: 500,
      max_batch_count: -1,
      max_texture_size_mb: 500,
    })
    expect(cappedTierLimits({ max_file_size_mb: 50, max_batch_count: 5, max_texture_size_mb: 2048 }, config)).toEqual({
      max_file_size_mb: 50,
      max_batch_count: 5,
      max_texture_size_mb: 500,
    })
  })
  it('turns -1 into unlimited and keeps the operator cap over the tier', () => {
    expect(activeLimits({ max_file_size_mb: -1, max_batch_count: -1, max_texture_size_mb: -1 }, config)).toEqual({
      maxFileBytes: 500 * MB,
      maxBatchCount: Infinity,
      maxTextureBytes: 500 * MB,
    })
    expect(activeLimits({ max_file_size_mb: 2048, max_batch_count: 50, max_texture_size_mb: 64 }, config)).toEqual({
      maxFileBytes: 500 * MB,
      maxBatchCount: 50,
      maxTextureBytes: 64 * MB,
    })
  })
})
