import type { Variant, VariantDocuments } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'

/** License queries (4.13, 4.14), in the variant's shape. */
export interface LicenseResource<V extends Variant> {
  /** GET /license/info. */
  licenseInfo(options?: RequestOptions): Promise<VariantDocuments[V]['licenseInfo']>
  /** POST /license/verify with `{ license_key }`. */
  licenseVerify(licenseKey: string, options?: RequestOptions): Promise<VariantDocuments[V]['licenseVerify']>
}

/** Creates the license calls on a transport. */
export function createLicense<V extends Variant>(transport: Transport): LicenseResource<V> {
  return {
    licenseInfo: async (options) =>
      (await transport.request(
        { method: 'GET', path: '/license/info', responseType: 'json' },
        options,
      )) as VariantDocuments[V]['licenseInfo'],
    licenseVerify: async (licenseKey, options) =>
      (await transport.request(
        { method: 'POST', path: '/license/verify', body: { license_key: licenseKey }, responseType: 'json' },
        options,
      )) as VariantDocuments[V]['licenseVerify'],
  }
}
