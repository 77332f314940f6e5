import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { hashPassword } from '../console/password-hash.ts'

const USAGE = `mos-console-password: prints the scrypt hash of a console password for SERVICE__CONSOLE__ADMIN_PASSWORD_HASH

  npm run console-password                        (asks for the password twice, without echo)
  printf '%s' "$PASSWORD" | npm run console-password --silent     (reads the first line of stdin)

The password is never taken from the command line, where other users and the shell history see it.`

/** Passwords shorter than this are refused: the console opens every task and the licence. */
export const MIN_PASSWORD_LENGTH = 12

/** Reads standard input to its end; the first line is the password (a trailing newline is not part of it). */
async function readPiped(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? ''
}

/** Asks on the terminal with echo off. */
function ask(question: string): Promise<string> {
  let muted = false
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    },
  })
  const terminal = createInterface({ input: process.stdin, output, terminal: true })
  return new Promise((resolve) => {
    terminal.question(question, (answer) => {
      terminal.close()
      process.stderr.write('\n')
      resolve(answer)
    })
    muted = true
  })
}

/** Runs the command; resolves with the exit code. Writes the hash to stdout, everything else to stderr. */
export async function runConsolePasswordCli(args: readonly string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (args.length > 0) {
    process.stderr.write(`mos-console-password: takes no arguments (the password is read from stdin)\n\n${USAGE}\n`)
    return 2
  }
  let password: string
  if (process.stdin.isTTY) {
    password = await ask('console password: ')
    if ((await ask('again: ')) !== password) {
      process.stderr.write('mos-console-password: the two passwords differ\n')
      return 1
    }
  } else password = await readPiped(process.stdin)
  if (password.length < MIN_PASSWORD_LENGTH) {
    process.stderr.write(`mos-console-password: the password must have at least ${MIN_PASSWORD_LENGTH} characters\n`)
    return 1
  }
  process.stdout.write(`${await hashPassword(password)}\n`)
  return 0
}

/** The bin's entry. */
export async function mainConsolePasswordCli(args: readonly string[]): Promise<void> {
  process.exitCode = await runConsolePasswordCli(args)
}
