import { startBenchService, roundTrip } from './service.ts'
import type { Input } from './stats.ts'

export interface UploadMemoryResult {
  uploadMb: number
  baselineRssMb: number
  peakRssMb: number
  growthMb: number
  seconds: number
}

/**
 * A compress request's multipart body of `uploadMb` megabytes, made as it is read (1 MB pieces of
 * one buffer): nothing is buffered on the client, so the RSS measured is the service's own.
 */
export function streamedUpload(uploadMb: number): { body: ReadableStream<Uint8Array>; contentType: string; sentMb(): number } {
  const boundary = 'mosbenchboundary'
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.glb"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  )
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
  const chunk = new Uint8Array(1024 * 1024).fill(0x41)
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head)
    },
    pull(controller) {
      if (sent >= uploadMb) {
        controller.enqueue(tail)
        controller.close()
        return
      }
      sent++
      controller.enqueue(chunk)
    },
  })
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, sentMb: () => sent }
}

/**
 * RSS of the service while it receives a large upload streamed from a generator: nothing is
 * buffered on the client either, so the figure is the service's own.
 */
export async function measureUploadMemory(uploadMb: number): Promise<UploadMemoryResult> {
  // Upload into a service with no engine work in the way: the file is refused by its magic later.
  const service = await startBenchService({ SERVICE__LIMITS__MAX_FILE_SIZE_MB: String(uploadMb * 2), SERVICE__ENGINES__THREADS: '1' })
  try {
    const { body, contentType } = streamedUpload(uploadMb)
    const baseline = await service.rss()
    let peak = baseline
    const sampler = setInterval(() => void service.rss().then((r) => (peak = Math.max(peak, r))), 50)
    const start = performance.now()
    const response = await service.call('/api/v1/compress', {
      method: 'POST',
      body,
      headers: { 'content-type': contentType },
      duplex: 'half',
    } as RequestInit)
    clearInterval(sampler)
    if (!response.ok) throw new Error(`upload refused: ${response.status} ${await response.text()}`)
    return {
      uploadMb,
      baselineRssMb: baseline / 2 ** 20,
      peakRssMb: peak / 2 ** 20,
      growthMb: (peak - baseline) / 2 ** 20,
      seconds: (performance.now() - start) / 1000,
    }
  } finally {
    await service.stop()
  }
}

export interface WorkerMemoryResult {
  input: string
  inputMb: number
  peakGrowthMb: number
  perInputMb: number
}

/** Peak growth of the service's RSS while one compress task runs, relative to the input size. */
export async function measureWorkerMemory(input: Input): Promise<WorkerMemoryResult> {
  const service = await startBenchService({ SERVICE__ENGINES__THREADS: '1' })
  try {
    const baseline = await service.rss()
    let peak = baseline
    const sampler = setInterval(() => void service.rss().then((r) => (peak = Math.max(peak, r))), 20)
    await roundTrip(service, input, { engine: 'draco' })
    clearInterval(sampler)
    const inputMb = input.bytes.byteLength / 2 ** 20
    const growth = (peak - baseline) / 2 ** 20
    return { input: input.name, inputMb, peakGrowthMb: growth, perInputMb: growth / inputMb }
  } finally {
    await service.stop()
  }
}
