// Package english writes counts the way a reader expects them, for the
// command line's messages and the site's pages alike: "1 lesson", "3 lessons";
// and shortens what a visitor typed before a message quotes it.
package english

import (
	"strconv"
	"unicode/utf8"
)

// Plural writes n with the word that fits it: Plural(1, "lesson",
// "lessons") is "1 lesson", Plural(3, …) is "3 lessons", Plural(0, …) is
// "0 lessons".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Truncate shortens what a visitor typed before a message quotes it: at most
// n bytes, cut at a rune boundary, with "…" when something was cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
