import { render } from 'preact'
import { App } from './app.tsx'
import './styles.css'

const root = document.getElementById('app')!
// The "Loading…" line of index.html is for the moment before this script runs; the app replaces it.
root.replaceChildren()
render(<App />, root)
