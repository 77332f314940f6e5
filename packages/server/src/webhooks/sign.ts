import { createHmac } from 'node:crypto'

/**
 * The `Mos-Signature` of a delivery, Stripe-style: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`. The time is signed with the body, so a receiver can refuse an old replayed one
 * (the SDK's `verifyWebhookSignature` checks both).
 */
export function signatureHeader(body: string, secret: string, unixSeconds = Math.floor(Date.now() / 1000)): string {
  const digest = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${digest}`
}
