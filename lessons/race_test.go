//go:build race

package lessons

// raceEnabled: the tests run with -race, so the examples are built with it too.
const raceEnabled = true
