import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { checkDownload, downloadPath } from '../api.ts'

/**
 * The link that downloads a task's result (a Work card's, Admin's open record's). It stays a real link (the address
 * can be copied, opened by hand), but a click first asks the service whether the result is there (`checkDownload`):
 * a task deleted or swept since the page showed it answered 404, and the link opened that JSON as the tab's page.
 * Refused, the service's words are said beside the link; there, the browser's own download saves it (`download`
 * and the service's `Content-Disposition: attachment`), streamed to disk whatever its size.
 */
export function DownloadLink(props: { taskId: string; filename?: string; testId?: string; children: ComponentChildren }) {
  const [problem, setProblem] = useState('')
  const [checking, setChecking] = useState(false)
  const path = downloadPath(props.taskId)

  const click = async (event: MouseEvent) => {
    event.preventDefault()
    if (checking) return
    setChecking(true)
    setProblem('')
    try {
      await checkDownload(props.taskId)
      const link = document.createElement('a')
      link.href = path
      link.download = props.filename ?? ''
      document.body.append(link)
      link.click()
      link.remove()
    } catch (error) {
      setProblem(`Could not download: ${(error as Error).message}`)
    } finally {
      setChecking(false)
    }
  }

  return (
    <>
      <a class="button" href={path} download={props.filename ?? true} data-testid={props.testId} aria-busy={checking} onClick={click}>
        {props.children}
      </a>
      {problem ? (
        <span class="error" role="alert" data-testid="download-problem">
          {problem}
        </span>
      ) : null}
    </>
  )
}
