//go:build !race

package playground

const raceDetector = false
