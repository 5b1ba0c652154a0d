//go:build !race

package playground

// raceDetector: see race_on.go.
const raceDetector = false

// sandboxSlowdown: see race_on.go.
const sandboxSlowdown = 1
