// Package owner is how local processes find and call the owner (the tray,
// m1nd serve): the record a running owner keeps in the runtime folder,
// one owner per repository, and the client the CLI's spawn and runnerd's
// announce call it with.
package owner
