// Package trayclient is how local processes find and call the tray (m1nd
// serve): the record a running tray keeps in the runtime folder, one per
// repository, and the client the CLI's spawn and runnerd's announce call
// it with.
package trayclient
