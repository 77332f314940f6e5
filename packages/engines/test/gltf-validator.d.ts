// gltf-validator ships no types; the tests use validateBytes only.
declare module 'gltf-validator' {
  interface ValidationMessage {
    code: string
    message: string
    severity: number
    pointer?: string
  }
  export function validateBytes(data: Uint8Array, options?: { maxIssues?: number }): Promise<{ issues: { messages: ValidationMessage[] } }>
}
