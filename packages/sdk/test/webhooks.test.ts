import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { verifyWebhookSignature } from '../src/index.ts'

const secret = 'whsec_test_0123456789'
const body = JSON.stringify({ task_id: 't1', status: 'completed' })
/** Signed by node:crypto, not by the code under test. */
const sign = (t: number, payload = body, key = secret) => `t=${t},v1=${createHmac('sha256', key).update(`${t}.${payload}`).digest('hex')}`
const now = 1_800_000_000

describe('verifyWebhookSignature', () => {
  it('accepts a delivery signed with the secret, as text or bytes', async () => {
    expect(await verifyWebhookSignature(body, sign(now), secret, { now })).toBe(true)
    expect(await verifyWebhookSignature(new TextEncoder().encode(body), sign(now - 200), secret, { now })).toBe(true)
  })

  it('accepts any of several v1 signatures (a secret being rotated)', async () => {
    const other = sign(now, body, 'old-secret').split(',')[1]
    expect(await verifyWebhookSignature(body, `${sign(now)},${other}`, secret, { now })).toBe(true)
    expect(await verifyWebhookSignature(body, `t=${now},${other}`, secret, { now })).toBe(false)
  })

  it('refuses a changed body, another secret, an old or future time, and malformed headers', async () => {
    expect(await verifyWebhookSignature(`${body} `, sign(now), secret, { now })).toBe(false)
    expect(await verifyWebhookSignature(body, sign(now, body, 'other'), secret, { now })).toBe(false)
    expect(await verifyWebhookSignature(body, sign(now - 301), secret, { now })).toBe(false)
    expect(await verifyWebhookSignature(body, sign(now + 301), secret, { now })).toBe(false)
    expect(await verifyWebhookSignature(body, sign(now - 3_000), secret, { now, tolerance: 0 })).toBe(true)
    for (const header of [null, '', `t=${now}`, `v1=${'0'.repeat(64)}`, `t=soon,v1=${'0'.repeat(64)}`, sign(now).slice(0, -2)]) {
      expect(await verifyWebhookSignature(body, header, secret, { now })).toBe(false)
    }
    expect(await verifyWebhookSignature(body, sign(now), '', { now })).toBe(false)
  })
})
