// Package gittest makes real git repositories in temporary folders for
// tests and runs the real git binary against them. It is test support only:
// no production package imports it.
package gittest
