// Package static holds the site's hand-written front end: one stylesheet, a
// tiny script that applies the saved theme before first paint, a small
// progressive-enhancement script and the icon. They are embedded into the
// binary, so the site works offline with no build step; package web serves
// them under content-hashed names with long cache lifetimes.
package static

import "embed"

// FS holds app.css, app.js, theme.js, favicon.svg, the exercise editor's
// exercise.css and exercise.js, and workshops' workshop.css and workshop.js
// at its root.
//
//go:embed app.css app.js theme.js favicon.svg exercise.css exercise.js workshop.css workshop.js
var FS embed.FS
