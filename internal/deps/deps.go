// Package deps pins the project's dependencies while the packages that use
// them are being written; delete it once every import below has a real user.
package deps

import (
	_ "github.com/PuerkitoBio/goquery"
	_ "github.com/a-h/templ"
	_ "github.com/alecthomas/chroma/v2"
	_ "github.com/chromedp/chromedp"
	_ "github.com/yuin/goldmark"
	_ "github.com/yuin/goldmark-highlighting/v2"
	_ "go.abhg.dev/goldmark/frontmatter"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
