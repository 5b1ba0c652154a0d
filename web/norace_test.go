//go:build !race

package web

// raceEnabled: the tests run without -race (race_test.go).
const raceEnabled = false
