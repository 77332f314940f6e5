import { useCallback, useEffect, useState } from 'preact/hooks'
import { request } from '../api.ts'

export interface Loaded<T> {
  data: T | undefined
  error: string
  loading: boolean
  reload: () => void
}

/** Reads a console document, again every `everyMs` when given (the live panels). */
export function useJson<T>(path: string | null, everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState('')
  const [loading, setLoading] = useState(false)
  const [round, setRound] = useState(0)
  const reload = useCallback(() => setRound((value) => value + 1), [])

  useEffect(() => {
    if (!path) return
    let alive = true
    setLoading(true)
    request<T>(path)
      .then((value) => {
        if (!alive) return
        setData(value)
        setError('')
      })
      .catch((failure: Error) => alive && setError(failure.message))
      .finally(() => alive && setLoading(false))
    return () => {
      alive = false
    }
  }, [path, round])

  useEffect(() => {
    if (!everyMs) return
    const timer = setInterval(reload, everyMs)
    return () => clearInterval(timer)
  }, [everyMs, reload])

  return { data, error, loading, reload }
}

/** What a panel shows while its document loads or when it failed. */
export function LoadState({ loaded, what }: { loaded: Loaded<unknown>; what: string }) {
  if (loaded.error)
    return (
      <p class="error" role="alert">
        Could not read {what}: {loaded.error}
      </p>
    )
  if (loaded.data === undefined && loaded.loading)
    return (
      <p aria-busy="true">
        <span class="spinner" aria-hidden="true" /> Reading {what}…
      </p>
    )
  return null
}
