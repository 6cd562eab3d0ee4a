// Package secret keeps what must stay secret from the agents runnerd
// spawns, outside the git dir in a private folder of the common dir: the
// shared local secret that authenticates runnerd and the owner to each
// other on loopback, and the Ed25519 key runnerd signs its gates with.
// m1nd init makes both; it links no network code, so the small m1nd's
// init does not pay for the servers that read them.
package secret
