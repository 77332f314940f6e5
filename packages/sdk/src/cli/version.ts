// The JSON import is inlined by the build (tsdown), so dist/cli.js carries the version it was built
// with and reads no file at run time, wherever the package is installed or bundled.
import manifest from '../../package.json' with { type: 'json' }

/** The @mos/sdk version `mos --version` prints: the package's own, from its package.json. */
export const SDK_VERSION: string = manifest.version
