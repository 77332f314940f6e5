import { useState } from 'preact/hooks'
import { postJson } from './api.ts'
import type { Session } from './types.ts'

/** The password form. The service answers with an HttpOnly session cookie; the page keeps only the CSRF token. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice?: string }) {
  const [password, setPassword] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError('')
    try {
      onSignedIn(await postJson<Session>('/auth/login', { password }))
    } catch (failure) {
      setError(`Sign-in refused: ${(failure as Error).message}`)
      setBusy(false)
    }
  }

  return (
    <main class="centered">
      <form class="card sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to the Mos console</h1>
        {notice ? <p class="notice">{notice}</p> : null}
        <label for="password">Administrator password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword((event.target as HTMLInputElement).value)}
          aria-describedby={error ? 'sign-in-error' : undefined}
          aria-invalid={error ? 'true' : undefined}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p id="sign-in-error" class="error" role="alert">
          {error}
        </p>
      </form>
    </main>
  )
}
