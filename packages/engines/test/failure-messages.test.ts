import { describe, expect, it } from 'vitest'
import { failureMessage, ModelInputError } from '../src/index.ts'
import { withoutPaths } from '../src/errors.ts'
import { threadFailureMessage } from '../src/pool.ts'

describe('failure messages name the input, not our internals', () => {
  it('passes input errors as they are', () => {
    expect(failureMessage(new ModelInputError('truncated GLB: header declares 10 bytes, file has 4'))).toBe(
      'truncated GLB: header declares 10 bytes, file has 4',
    )
  })

  it('says a stack overflow is nesting in the input', () => {
    const overflow = (() => {
      const recurse = (n: number): number => recurse(n + 1) + 1
      try {
        recurse(0)
      } catch (error) {
        return error
      }
    })()
    expect(overflow).toBeInstanceOf(RangeError)
    expect(failureMessage(overflow)).toBe('the input is nested too deeply to process')
  })

  it('keeps the first line of a library error, with paths cut to their base name', () => {
    const error = new TypeError(
      "Cannot read properties of undefined (reading 'getArray') in /work/app/node_modules/@gltf-transform/core/dist/index.js",
    )
    error.stack = `${error.message}\n    at readAccessor (/work/app/node_modules/@gltf-transform/core/dist/index.js:10:5)`
    expect(failureMessage(error)).toBe(
      "the input could not be processed: Cannot read properties of undefined (reading 'getArray') in index.js",
    )
    expect(failureMessage(new Error('bad thing\n    at x (/srv/mos/worker.ts:1:1)'))).toBe('the input could not be processed: bad thing')
    expect(withoutPaths("open 'C:\\data\\tasks\\abc\\input' and file:///srv/data/x.glb")).toBe("open 'input' and x.glb")
  })

  it('says a system error is the service state, without its path', () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write '/var/lib/mos/files/tasks/t1/output'"), {
      code: 'ENOSPC',
    })
    expect(failureMessage(enospc)).toBe('internal error: insufficient disk space')
    // A full quota, and a full disk wrapped by a stream or fetch, are the same state.
    expect(failureMessage(Object.assign(new Error('EDQUOT: disk quota exceeded'), { code: 'EDQUOT' }))).toBe(
      'internal error: insufficient disk space',
    )
    expect(failureMessage(new Error('write failed', { cause: enospc }))).toBe('internal error: insufficient disk space')
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/var/lib/mos/files/tasks/t1/input'"), {
      code: 'ENOENT',
    })
    expect(failureMessage(enoent)).toBe('internal error: ENOENT')
  })

  it('turns a dead thread into what the input did to it', () => {
    expect(threadFailureMessage(new Error('Stack Overflow'))).toBe('the input is nested too deeply to process')
    expect(
      threadFailureMessage(
        Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), {
          code: 'ERR_WORKER_OUT_OF_MEMORY',
        }),
      ),
    ).toBe('the input needed more memory than an engine thread may use')
    expect(threadFailureMessage(new Error('The task has been aborted'))).toBe('cancelled')
    expect(threadFailureMessage(new Error('worker exited with code 134 at /srv/mos/thread-entry.cjs'))).toBe(
      'the input could not be processed: the engine stopped on it',
    )
  })
})
