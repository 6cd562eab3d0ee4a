// Package githook is the git hooks m1nd installs (reference-transaction
// in every repository, pre-receive on a bare remote): their scripts, their
// install beside hooks that were already there, and reading git's input
// and objects for the laws.
package githook
