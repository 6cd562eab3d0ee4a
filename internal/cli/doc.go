// Package cli is the m1nd command line: urfave/cli wiring, replies and
// exit codes. It is importable, so tests run every verb in-process through
// Main with in-memory streams; cmd/m1nd only calls Main. The work itself is
// done by ops, chain, brain and the packages below them.
package cli
