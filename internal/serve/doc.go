// Package serve holds what m1nd's two loopback HTTP servers (the owner and
// the runner daemon) share: binding loopback only, serving until done,
// answering JSON, the shared secret, and the owner's record.
package serve
