// Package runners reads what the operator pins in runners.toml (the
// runners and their capabilities, the keeper's pinned agents) and what the
// keeper journals, for every process that shows or acts on them: runnerd
// runs them, the tray and the CLI show where each pin stands against the
// approved set and what the keeper does next. It spawns nothing; runnerd
// is the only spawner.
package runners
