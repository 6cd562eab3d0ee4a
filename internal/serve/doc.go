// Package serve holds what m1nd's two loopback HTTP servers (the owner and
// the runner daemon) share: binding loopback only, serving until done,
// answering JSON, the shared secret and its file, the owner's record, the
// owner's client, and the wire types runnerd and the owner speak.
package serve
