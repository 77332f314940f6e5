/** The 3D views' background colour; the browser tests count the screenshot pixels that differ from it. */
export const VIEW_BACKGROUND = 0x20242c
