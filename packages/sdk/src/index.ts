// @mos/sdk: the typed client lands with the SDK issue; the contract is already public.

// Contract
export * from './contract/index.ts'
