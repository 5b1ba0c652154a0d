// Package playurl is the playground's state and its URL codec: the one
// place that reads a playground URL (a page's query, a form's answer, the
// JSON API's query) and the only writer of one (links, the hidden fields
// of GET forms, counterexample links, oEmbed, the attributes
// playground.js reads).
//
// A State holds typed values (the script as parsed events among them); it
// becomes text only when a URL is written. A Place is where a playground
// is drawn (a lesson block, its embed view, /playground, /embed/playground),
// which decides the path its links go to and what "reset" means. A
// LinkCache lets the dozens of links of one view share the escaped script.
// The query keys and their meaning are documented in package web.
//
// playurl knows nothing of net/http: it works on url.Values and strings.
package playurl
