// Package english writes counts the way a reader expects them, for the
// command line's messages and the site's pages alike: "1 lesson", "3 lessons".
package english

import "strconv"

// Plural writes n with the word that fits it: Plural(1, "lesson",
// "lessons") is "1 lesson", Plural(3, …) is "3 lessons", Plural(0, …) is
// "0 lessons".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
