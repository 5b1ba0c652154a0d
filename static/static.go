// Package static holds the site's hand-written front end: one stylesheet
// (written in parts under css/, served as one app.css), a
// tiny script that applies the saved theme before first paint, a small
// progressive-enhancement script and the icon. They are embedded into the
// binary, so the site works offline with no build step; package web serves
// them under content-hashed names with long cache lifetimes.
package static

import (
	"bytes"
	"embed"
	"io/fs"
)

// FS holds app.js, playground.js, theme.js, favicon.svg, the exercise editor's
// exercise.css and exercise.js, and workshops' workshop.css and workshop.js
// at its root, and the site's stylesheet in parts under css/.
//
//go:embed app.js playground.js theme.js favicon.svg exercise.css exercise.js workshop.css workshop.js css/*.css
var FS embed.FS

// Stylesheet is the site's one stylesheet, app.css: the parts under css/
// joined in the order of their names (10-base.css first), so the browser
// makes one request while no source file holds the whole site's styles.
func Stylesheet() []byte {
	parts, err := fs.Glob(FS, "css/*.css") // sorted by name
	if err != nil {
		panic(err) // a constant, valid pattern
	}
	var sheet bytes.Buffer
	for _, name := range parts {
		part, err := FS.ReadFile(name)
		if err != nil {
			panic(err) // embedded: cannot be missing
		}
		sheet.Write(part)
	}
	return sheet.Bytes()
}
