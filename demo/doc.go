// Package demo builds the embedded default brain a newcomer starts with:
// a small git repository whose missions show every part of a chain.
package demo
