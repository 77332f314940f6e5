import type { TaskType } from '@mos/sdk/contract'
import { expect } from '../assert.ts'
import { fail } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { Fixture, Fixtures } from '../fixtures/index.ts'
import { checkTaskRecords, completedTask, type Fields } from '../tasks.ts'

const fixture = (name: keyof Fixtures) => async (ctx: RunContext) => (await ctx.fixtures())[name] as Fixture

/** A completed task of an operation: records checked, download length equal to output.size_bytes. */
export async function finished(ctx: RunContext, key: string, type: TaskType, path: string, fields: Fields, file: keyof Fixtures) {
  const run = await completedTask(ctx, key, type, path, fields, fixture(file))
  checkTaskRecords(run)
  const size = (run.final.output as { size_bytes: number }).size_bytes
  expect(run.output.byteLength === size, `downloaded ${run.output.byteLength} bytes, output.size_bytes is ${size}`)
  return run
}

/** Turns an inspector's exception into a check failure that says what was wrong. */
export const wrap = <T>(what: string, promise: Promise<T> | (() => T)) =>
  (typeof promise === 'function' ? Promise.resolve().then(promise) : promise).catch((error: Error) => fail(`${what}: ${error.message}`))
