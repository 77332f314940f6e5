// Types for the parts of Khronos' gltf-validator (dart2js build, ships no typings) that Mos uses.
declare module 'gltf-validator' {
  export interface ValidationMessage {
    code: string
    message: string
    /** 0 error, 1 warning, 2 information, 3 hint. */
    severity: 0 | 1 | 2 | 3
    pointer?: string
    offset?: number
  }
  export interface ValidationReport {
    uri?: string
    validatorVersion: string
    issues: {
      numErrors: number
      numWarnings: number
      numInfos: number
      numHints: number
      messages: ValidationMessage[]
      truncated: boolean
    }
    info?: { version?: string; generator?: string }
  }
  export interface ValidationOptions {
    uri?: string
    format?: 'glb' | 'gltf'
    maxIssues?: number
    writeTimestamp?: boolean
    ignoredIssues?: string[]
    externalResourceFunction?: (uri: string) => Promise<Uint8Array>
  }
  export function version(): string
  export function validateBytes(data: Uint8Array, options?: ValidationOptions): Promise<ValidationReport>
}
