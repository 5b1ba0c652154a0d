package web

// highlightCSS is the stylesheet for chroma's classes in highlighted code.
// TODO(web): use lessons.HighlightCSS() once the lessons package has it.
func highlightCSS() []byte {
	return []byte("/* Code highlighting styles: provided by the lessons package. */\n")
}
