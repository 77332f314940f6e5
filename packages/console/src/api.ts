import type { Session } from './types.ts'

/** An answer of the service that was not a success, with the service's own words. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

let csrfToken = ''
let sessionEnded: () => void = () => {}

/** What to do when the service says the session is gone (expired, signed out elsewhere): back to the sign-in page. */
export function onSessionEnded(handler: () => void): void {
  sessionEnded = handler
}

/** Remembers the session's CSRF token (from /auth/login or /auth/me) for the state-changing requests. */
export function setSession(session: Session | null): void {
  csrfToken = session?.csrf_token ?? ''
}

/** The words of an error answer: the service's `{"error": …}`, else the status in words. */
async function errorOf(response: Response): Promise<RequestError> {
  let words = ''
  try {
    const body = (await response.json()) as { error?: unknown }
    if (typeof body.error === 'string') words = body.error
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  return new RequestError(response.status, words || `the service answered ${response.status} ${response.statusText}`.trim())
}

/**
 * Whether a 401 on `path` means the session held has ended: any console endpoint's while signed in,
 * `/auth/me` included (the Work page asks it whether the service answers), but not a wrong password at
 * sign-in, nor the first `/auth/me` of a page no one has signed in to yet (no session held then).
 */
function endsSession(path: string): boolean {
  return csrfToken !== '' && path !== '/auth/login'
}

function headersFor(method: string, extra?: HeadersInit): Headers {
  const headers = new Headers(extra)
  headers.set('Accept', 'application/json')
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers.set('X-CSRF-Token', csrfToken)
  return headers
}

/** The service's answer to a console request, whatever its status; a network failure rejects in words. */
async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase()
  let response: Response
  try {
    response = await fetch(path, { ...init, method, credentials: 'same-origin', headers: headersFor(method, init.headers) })
  } catch {
    throw new RequestError(0, 'the service cannot be reached: check that it is running and the network')
  }
  if (response.status === 401 && endsSession(path)) sessionEnded()
  return response
}

/** A console request answered with JSON (or 204: undefined). Network failures are said in words too. */
export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await send(path, init)
  if (!response.ok) throw await errorOf(response)
  if (response.status === 204) return undefined as T
  return (await response.json()) as T
}

/** POST with a JSON body. */
export function postJson<T>(path: string, body: unknown): Promise<T> {
  return request<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } })
}

/**
 * An upload stopped by its caller. `sent`: the whole body had gone out when it stopped, so the service may have made the
 * task all the same (it makes it once the body is read, and the answer was still on its way); before that it cannot
 * have, since a request cut short makes none.
 */
export class UploadCancelled extends RequestError {
  constructor(readonly sent: boolean) {
    super(0, 'the upload was cancelled')
  }
}

/**
 * Uploads a multipart form with XMLHttpRequest, the one browser API that reports upload progress:
 * a large model's upload shows its bytes moving instead of a still page.
 */
export function upload<T>(path: string, form: FormData, onProgress: (share: number) => void, signal?: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    // Cancel upload on a card: the bytes stop, and the service, which answers a request cut short with no task, makes none.
    signal?.addEventListener('abort', () => xhr.abort(), { once: true })
    let sent = false
    xhr.upload.onload = () => {
      sent = true
    }
    xhr.onabort = () => reject(new UploadCancelled(sent))
    xhr.open('POST', path)
    xhr.withCredentials = true
    xhr.setRequestHeader('Accept', 'application/json')
    if (csrfToken) xhr.setRequestHeader('X-CSRF-Token', csrfToken)
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total)
    }
    xhr.onerror = () => reject(new RequestError(0, 'the upload was interrupted: the service cannot be reached'))
    xhr.onload = () => {
      let body: unknown
      try {
        body = JSON.parse(xhr.responseText)
      } catch {
        body = undefined
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body as T)
      // As request() does: a session ended elsewhere (signed out in another tab, expired) brings the sign-in page back.
      if (xhr.status === 401 && endsSession(path)) sessionEnded()
      const words = (body as { error?: unknown } | undefined)?.error
      reject(new RequestError(xhr.status, typeof words === 'string' ? words : `the service answered ${xhr.status}`))
    }
    xhr.send(form)
  })
}

/** Fetches a task's result as bytes (the output view loads it; the download link saves it). */
export async function downloadResult(taskId: string): Promise<Blob> {
  const response = await fetch(downloadPath(taskId), { credentials: 'same-origin' })
  if (!response.ok) throw await errorOf(response)
  return response.blob()
}

/**
 * Resolves when a task's result can be downloaded now, else rejects with the service's words (`result of task … is no
 * longer available` once its file is gone, `task not found: …` once the task is). A download link followed blindly
 * opened such an answer's raw JSON as the page. A HEAD asks without moving the file (the service asks its store for the
 * size); only when it is refused is the GET sent, whose error answer is a few bytes of JSON carrying the words a HEAD
 * cannot. The result itself is then saved by the browser's own download, never held in the page's memory.
 */
export async function checkDownload(taskId: string): Promise<void> {
  const path = downloadPath(taskId)
  if ((await send(path, { method: 'HEAD' })).ok) return
  const answer = await send(path)
  // There after all (a HEAD refused by something in between): the browser's download fetches it again.
  if (answer.ok) return void (await answer.body?.cancel())
  throw await errorOf(answer)
}

export function downloadPath(taskId: string): string {
  return `/admin/tasks/${encodeURIComponent(taskId)}/download`
}

/** A byte count for people: 1.2 MB, 340 KB, 12 B. */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return '—'
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(2)} MB`
}
