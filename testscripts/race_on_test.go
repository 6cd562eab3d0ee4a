//go:build race

package testscripts

// raceEnabled says this test binary, and so every m1nd it starts, is built
// with the race detector: each process runs several times slower.
const raceEnabled = true
