// Package loopback holds the loopback HTTP helpers m1nd's two servers (the
// owner and the runner daemon) share: binding loopback only, serving until
// done, answering JSON and refusals (the shared secret and the runner key
// are in internal/secret).
// The owner's record and client are in internal/trayclient, the wire types the
// two speak in internal/wire, side records in internal/runs.
package loopback
