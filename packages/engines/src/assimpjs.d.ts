// assimpjs ships no types; these cover the embind surface Mos uses (see assimpjs/src/assimpjs.cpp).
declare module 'assimpjs' {
  interface EmbindObject {
    delete(): void
  }
  export interface AssimpFile extends EmbindObject {
    GetPath(): string
    GetContent(): Uint8Array
  }
  export interface AssimpFileList extends EmbindObject {
    AddFile(path: string, content: Uint8Array): void
  }
  export interface AssimpResult extends EmbindObject {
    IsSuccess(): boolean
    GetErrorCode(): string
    FileCount(): number
    GetFile(index: number): AssimpFile
  }
  export interface AssimpModule {
    FileList: new () => AssimpFileList
    ConvertFileList(list: AssimpFileList, format: 'glb2' | 'gltf2' | 'assjson'): AssimpResult
    HEAP8: Int8Array
  }
  const assimpjs: (options?: { wasmBinary?: Uint8Array }) => Promise<AssimpModule>
  export default assimpjs
}
