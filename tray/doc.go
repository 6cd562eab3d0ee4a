// Package tray is the owner: a loopback HTTP API over the brain's missions,
// store and mail, server-sent events when any refs/m1nd ref moves, and the
// embedded web view (the tray) where a human lands work. The owner never
// spawns agents.
package tray
