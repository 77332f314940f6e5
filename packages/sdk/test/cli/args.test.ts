import { describe, expect, it } from 'vitest'
import { parseCliArgs, UsageError } from '../../src/cli/args.ts'
import { parseTasksArgs } from '../../src/cli/task-control.ts'

describe('parseCliArgs', () => {
  it('takes the address and key from flags, else from MOS_BASE_URL / MOS_API_KEY, else the default', () => {
    const env = { MOS_BASE_URL: 'http://env:1', MOS_API_KEY: 'env-key' }
    expect(parseCliArgs(['compress', 'a.glb'], env)).toMatchObject({
      baseURL: 'http://env:1',
      apiKey: 'env-key',
      engine: 'draco',
      files: ['a.glb'],
    })
    expect(parseCliArgs(['compress', 'a.glb', '--base-url', 'http://flag:2', '--api-key', 'k'], env)).toMatchObject({
      baseURL: 'http://flag:2',
      apiKey: 'k',
    })
    expect(parseCliArgs(['repair', 'a.glb'], {})).toMatchObject({ baseURL: 'http://localhost:8080', apiKey: undefined })
  })

  it('refuses an address that is no http(s) URL as a usage error, under the name it came by (an empty MOS_BASE_URL is unset)', () => {
    const problem = (address: string) => `must be an http:// or https:// address such as http://localhost:8080, not "${address}"`
    expect(() => parseCliArgs(['compress', 'a.glb', '--base-url', 'localhost:8080'], {})).toThrow(
      new UsageError(`--base-url ${problem('localhost:8080')}`),
    )
    expect(() => parseCliArgs(['compress', 'a.glb'], { MOS_BASE_URL: 'mos.internal' })).toThrow(
      new UsageError(`MOS_BASE_URL ${problem('mos.internal')}`),
    )
    expect(() => parseTasksArgs(['list', '--base-url', 'ftp://mos'], {})).toThrow(new UsageError(`--base-url ${problem('ftp://mos')}`))
    expect(parseCliArgs(['compress', 'a.glb'], { MOS_BASE_URL: '' }).baseURL).toBe('http://localhost:8080')
    expect(parseTasksArgs(['list'], { MOS_BASE_URL: 'https://mos.example/api/v1' }).baseURL).toBe('https://mos.example/api/v1')
  })

  it('reads --help after a command as the help command, before asking for a FILE', () => {
    const help = parseCliArgs(['help'], {})
    expect(help.command).toBe('help')
    expect(parseCliArgs(['compress', '--help'], {})).toEqual(help)
    expect(parseCliArgs(['convert', 'a.glb', '-h'], {})).toEqual(help)
  })

  it('reads --version and -V as the version command; no command at all is a usage error', () => {
    expect(parseCliArgs(['--version'], {}).command).toBe('version')
    expect(parseCliArgs(['-V'], {}).command).toBe('version')
    expect(() => parseCliArgs([], {})).toThrow(new UsageError('no command given'))
  })

  it('parses the Mos extension flags, sending only those given', () => {
    expect(
      parseCliArgs(
        [
          'compress',
          'a.glb',
          '--preset',
          'WEB',
          '--simplify',
          '0.5',
          '--texture-max-size',
          '1024',
          '--merge',
          '--callback-url',
          'https://h.example/x',
        ],
        {},
      ),
    ).toMatchObject({
      extensions: { preset: 'web', simplify_ratio: 0.5, texture_max_size: 1024, merge: true },
      callbackUrl: 'https://h.example/x',
    })
    expect(Object.keys(parseCliArgs(['compress', 'a.glb', '--simplify', '.25'], {}).extensions)).toEqual(['simplify_ratio'])
    expect(parseCliArgs(['repair', 'a.glb'], {}).extensions).toEqual({})
    expect(() => parseCliArgs(['compress', 'a.glb', '--simplify', 'half'], {})).toThrow(
      new UsageError('--simplify takes a number, not "half"'),
    )
    expect(() => parseCliArgs(['compress', 'a.glb', '--preset', 'tiny'], {})).toThrow(UsageError)
  })

  it('takes the request time limit in seconds from --request-timeout, else MOS_REQUEST_TIMEOUT, else leaves the default', () => {
    expect(parseCliArgs(['compress', 'a.glb', '--request-timeout', '600'], { MOS_REQUEST_TIMEOUT: '5' }).requestTimeoutMs).toBe(600_000)
    expect(parseCliArgs(['compress', 'a.glb'], { MOS_REQUEST_TIMEOUT: '5' }).requestTimeoutMs).toBe(5000)
    expect(parseCliArgs(['compress', 'a.glb', '--request-timeout', '0'], {}).requestTimeoutMs).toBe(0)
    expect(parseCliArgs(['compress', 'a.glb'], { MOS_REQUEST_TIMEOUT: '' }).requestTimeoutMs).toBeUndefined()
    expect(parseTasksArgs(['list', '--request-timeout', '30'], {}).requestTimeoutMs).toBe(30_000)
    expect(() => parseCliArgs(['compress', 'a.glb', '--request-timeout', '2m'], {})).toThrow(
      new UsageError('--request-timeout takes whole seconds (0: never), not "2m"'),
    )
    expect(() => parseCliArgs(['compress', 'a.glb'], { MOS_REQUEST_TIMEOUT: '-1' })).toThrow(
      new UsageError('MOS_REQUEST_TIMEOUT takes whole seconds (0: never), not "-1"'),
    )
  })

  it('parses the operation options', () => {
    expect(
      parseCliArgs(
        ['compress', 'a.glb', 'b.glb', '-e', 'MESHOPT', '-l', '3', '--meshopt-level', 'low', '-o', 'out', '--json', '--timeout', '30'],
        {},
      ),
    ).toMatchObject({
      engine: 'meshopt',
      level: 3,
      meshoptLevel: 'low',
      outDir: 'out',
      json: true,
      timeoutMs: 30_000,
      files: ['a.glb', 'b.glb'],
    })
    expect(parseCliArgs(['compress', 'a.glb', '--position-bits', '16'], {}).bits).toEqual({
      position: 16,
      normal: undefined,
      texcoord: undefined,
      color: undefined,
      generic: undefined,
    })
    expect(parseCliArgs(['compress', 'a.glb', '-e', 'meshopt', '--meshopt-extension', 'KHR'], {}).extensions).toEqual({
      meshopt_extension: 'khr',
    })
    expect(parseCliArgs(['compress', 'a.glb', '--progressive-jpeg'], {}).extensions).toEqual({ texture_progressive_jpeg: true })
    expect(parseCliArgs(['compress', 'a.glb', '--palette', '--merge'], {}).extensions).toEqual({ palette: true, merge: true })
    expect(
      parseCliArgs(['compress', 'a.glb', '--texture-format', 'WEBP', '--texture-quality', '70', '--lossy-normal-maps'], {}).extensions,
    ).toEqual({ texture_format: 'webp', texture_quality: 70, lossy_normal_maps: true })
    expect(parseCliArgs(['convert', 'a.glb', '--to', 'obj'], {}).to).toBe('obj')
    expect(parseCliArgs(['convert', 'a.glb', '--to', 'glb', '--simplify', '.5', '--merge'], {}).extensions).toEqual({
      simplify_ratio: 0.5,
      merge: true,
    })
    expect(parseCliArgs(['textures', 'a.png', '-f', 'webp', '-q', '80'], {})).toMatchObject({ format: 'webp', quality: 80 })
    expect(parseCliArgs(['ktx2', 'a.png', '--uastc'], {}).uastc).toBe(true)
    expect(parseCliArgs(['serve', '--anything'], {})).toMatchObject({ command: 'serve', rest: ['--anything'] })
  })

  it('rejects what cannot work, with a reason', () => {
    const reject = (argv: string[]) => () => parseCliArgs(argv, {})
    expect(reject(['shrink', 'a.glb'])).toThrow(new UsageError('unknown command "shrink"'))
    expect(reject(['compress'])).toThrow('compress needs at least one FILE')
    expect(reject(['compress', 'a.glb', '--engine', 'zstd'])).toThrow('--engine must be one of draco, meshopt, not "zstd"')
    expect(reject(['compress', 'a.glb', '--level', 'high'])).toThrow('--level takes an integer, not "high"')
    expect(reject(['convert', 'a.glb'])).toThrow('convert needs --to FORMAT')
    // Which extensions convert takes comes from the contract's convert fields.
    expect(reject(['convert', 'a.glb', '--to', 'glb', '--instance'])).toThrow(
      new UsageError(
        '--instance is a compress option (convert takes --simplify, --simplify-error, --texture-max-size, --power-of-two, --merge)',
      ),
    )
    expect(reject(['convert', 'a.glb', '--to', 'glb', '--meshopt-extension', 'khr', '--preset', 'web', '--merge'])).toThrow(
      '--preset, --meshopt-extension are compress options',
    )
    expect(reject(['convert', 'a.glb', '--to', 'glb', '--progressive-jpeg'])).toThrow('--progressive-jpeg is a compress option')
    expect(reject(['convert', 'a.glb', '--to', 'glb', '--palette'])).toThrow('--palette is a compress option')
    expect(reject(['convert', 'a.glb', '--to', 'glb', '--texture-format', 'webp'])).toThrow('--texture-format is a compress option')
    expect(reject(['compress', 'a.glb', '--texture-format', 'avif'])).toThrow(
      '--texture-format must be one of webp, jpeg, png, ktx2, not "avif"',
    )
    expect(parseCliArgs(['convert', 'a.glb', '--to', 'obj', '--simplify', '0.5', '--merge'], {}).extensions).toEqual({
      simplify_ratio: 0.5,
      merge: true,
    })
    expect(reject(['compress', 'a.glb', '--meshopt-extension', 'zstd'])).toThrow('--meshopt-extension must be one of ext, khr, not "zstd"')
    expect(reject(['textures', 'a.png'])).toThrow('textures needs --format FORMAT')
    expect(reject(['compress', 'a.glb', '--bogus'])).toThrow(UsageError)
  })
})
