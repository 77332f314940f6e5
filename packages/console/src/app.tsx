import { useEffect, useState } from 'preact/hooks'
import { onSessionEnded, postJson, request, RequestError, setSession } from './api.ts'
import { AdminPage } from './admin/admin-page.tsx'
import { SignIn } from './sign-in.tsx'
import type { ConsoleConfig, Session } from './types.ts'
import { WorkPage } from './work/work-page.tsx'

type Page = 'work' | 'admin'

const BASE = import.meta.env.BASE_URL

/** The page named by the address: /console/admin… is the admin page, anything else the work page. */
function pageFromLocation(): Page {
  return location.pathname.startsWith(`${BASE}admin`) ? 'admin' : 'work'
}

export function App() {
  const [session, setSessionState] = useState<Session | null | undefined>(undefined)
  const [config, setConfig] = useState<ConsoleConfig | null>(null)
  const [failure, setFailure] = useState('')
  const [page, setPage] = useState<Page>(pageFromLocation())

  const signedIn = (value: Session | null) => {
    setSession(value)
    setSessionState(value)
    if (value) setFailure('')
  }

  useEffect(() => {
    // /auth/session, not /auth/me: "not signed in" is its 200 `signed_in: false`, where /auth/me's 401 was logged by the
    // browser as an error on every sign-in page.
    request<{ signed_in: false } | ({ signed_in: true } & Session)>('/auth/session')
      .then((answer) => {
        if (!answer.signed_in) return signedIn(null)
        const { signed_in: _signedIn, ...session } = answer
        signedIn(session)
      })
      .catch((error: unknown) => {
        setFailure(String((error as Error).message))
        signedIn(null)
      })
    onSessionEnded(() => {
      setFailure('Your session has ended: sign in again.')
      signedIn(null)
    })
    const onPop = () => setPage(pageFromLocation())
    addEventListener('popstate', onPop)
    return () => removeEventListener('popstate', onPop)
  }, [])

  // The tab and the history say which page is shown (a screen reader announces the title on a page change), where
  // both pages and the sign-in read "Mos console".
  useEffect(() => {
    document.title = !session ? 'Sign in · Mos console' : page === 'admin' ? 'Admin · Mos console' : 'Work · Mos console'
  }, [session, page])

  useEffect(() => {
    if (!session) return
    setConfig(null)
    request<ConsoleConfig>('/config')
      .then(setConfig)
      .catch((error: Error) => setFailure(`the console could not read the deployment's configuration: ${error.message}`))
  }, [session])

  const go = (next: Page) => (event: Event) => {
    event.preventDefault()
    history.pushState(null, '', next === 'admin' ? `${BASE}admin` : BASE)
    setPage(next)
  }

  const signOut = async () => {
    try {
      await postJson('/auth/logout', {})
    } catch (error) {
      // A session already gone elsewhere: request() has brought the sign-in page back, saying so.
      if (!(error instanceof RequestError && error.status === 401)) setFailure(`signing out failed: ${(error as Error).message}`)
      return
    }
    signedIn(null)
  }

  if (session === undefined) {
    return (
      <main class="centered" aria-busy="true">
        <p>
          <span class="spinner" aria-hidden="true" /> Checking who is signed in…
        </p>
      </main>
    )
  }
  if (session === null) return <SignIn onSignedIn={signedIn} notice={failure} />

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Mos console</span>
        <nav aria-label="Sections">
          <a href={BASE} aria-current={page === 'work' ? 'page' : undefined} onClick={go('work')}>
            Work
          </a>
          <a href={`${BASE}admin`} aria-current={page === 'admin' ? 'page' : undefined} onClick={go('admin')}>
            Admin
          </a>
        </nav>
        <span class="who">
          {config ? (
            <span class="variant">
              variant {config.variant} · v{config.version}
            </span>
          ) : null}
          Signed in as <strong data-testid="who">{session.user}</strong>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {failure ? (
          <p class="error" role="alert">
            {failure}
          </p>
        ) : null}
        {!config ? (
          <p aria-busy="true">
            <span class="spinner" aria-hidden="true" /> Reading the deployment's configuration…
          </p>
        ) : (
          <>
            {/* Hidden, not unmounted, while Admin is shown: its cards, their live tasks and 3D views live in its
                state, which a page switch used to throw away. Admin reads everything afresh when it opens. */}
            <div hidden={page !== 'work'}>
              <WorkPage config={config} />
            </div>
            {page === 'admin' ? <AdminPage /> : null}
          </>
        )}
      </main>
    </>
  )
}
