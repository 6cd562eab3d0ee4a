// Package cli is the m1nd command line: urfave/cli wiring, replies and
// exit codes, and every verb the small m1nd (cmd/m1nd, Front) may link.
// It is importable, so tests run every verb in-process through Main with
// in-memory streams. The verbs that serve, spawn or read the hosts' TOML
// live in fullcli, which hands them to Main (Verbs) for
// m1nd-full; their packages' start-up is no hot verb's to pay. The work
// itself is done by ops, chain, brain and the packages below them.
package cli
